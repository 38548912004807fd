"""What `ioprobe calibrate` makes of the samples and batches of the user's Dataset (beside
ioprobe_calibrate.py): whether the DataLoader's collate accepts the samples, naming the field it
refuses, and which parts of a batch are tensors (their bytes are what crosses to the main process
through shared memory) and which carry no tensor bytes (strings, numbers kept as Python objects,
None from a collate_fn that allows it: pickled through the worker's pipe instead).

The check asks the collate itself, torch's default_collate unless the module defines collate_fn:
a sample is accepted exactly when the real DataLoader would batch it. default_collate batches
tensors, numpy arrays and numbers (into tensors), strings and bytes (into lists), and dicts,
namedtuples, tuples and lists of those (field by field); it refuses None, sets, arbitrary objects,
numpy arrays of strings or objects, and fields whose sizes differ between samples.
"""
import collections.abc


def _field(where, key):
    return f"{where}[{key!r}]"


def collate_refusal(samples, collate, is_default, torch):
    """None when collate(samples) works, as the DataLoader calls it in a worker; else (field,
    error): the first field of the sample (e.g. "sample['meta'][1]") the collate refuses and its
    own exception, "TypeError: default_collate: ..." as the DataLoader would raise it. With a
    collate_fn of the user's (is_default False) the field is the whole sample: their function is
    not asked about parts of it."""
    try:
        collate(samples)
        return None
    except Exception as e:  # noqa: BLE001 - the collate's own error is the message
        err = f"{type(e).__name__}: {e}"
    if not is_default:
        return "sample", err
    return _refused_field(samples, "sample", collate, torch) or ("sample", err)


def _refused_field(samples, where, collate, torch):
    """The deepest field at which default_collate refuses the samples, with its error; descends as
    default_collate does (mappings by key, sequences by position; strings and tensors are leaves)."""
    try:
        collate(samples)
        return None
    except Exception as e:  # noqa: BLE001
        err = f"{type(e).__name__}: {e}"
    first = samples[0]
    if isinstance(first, collections.abc.Mapping) and all(isinstance(s, collections.abc.Mapping) for s in samples):
        for key in first:
            if not all(key in s for s in samples):
                return _field(where, key), err  # default_collate's KeyError: a sample lacks the key
            deeper = _refused_field([s[key] for s in samples], _field(where, key), collate, torch)
            if deeper:
                return deeper
    elif (isinstance(first, collections.abc.Sequence) and not isinstance(first, (str, bytes))
          and all(isinstance(s, collections.abc.Sequence) for s in samples)
          and len({len(s) for s in samples}) == 1):
        names = getattr(first, "_fields", None)  # a namedtuple's fields by name
        for i in range(len(first)):
            sub = f"{where}.{names[i]}" if names else f"{where}[{i}]"
            deeper = _refused_field([s[i] for s in samples], sub, collate, torch)
            if deeper:
                return deeper
    return where, err


def _has_tensor(obj, torch):
    if isinstance(obj, torch.Tensor):
        return True
    if isinstance(obj, collections.abc.Mapping):
        return any(_has_tensor(v, torch) for v in obj.values())
    if isinstance(obj, (tuple, list)):
        return any(_has_tensor(v, torch) for v in obj)
    return False


def _holds(obj):
    """What a part without tensors is, in a few words: "str", "list of 32 str", "dict of 3 items"."""
    if isinstance(obj, (tuple, list)):
        kinds = sorted({type(v).__name__ for v in obj})
        return f"{type(obj).__name__} of {len(obj)} {'/'.join(kinds) if kinds else 'items'}"
    if isinstance(obj, collections.abc.Mapping):
        return f"{type(obj).__name__} of {len(obj)} items"
    return type(obj).__name__


def split_batch(obj, torch, where="batch"):
    """The tensors of a collated batch (a list) and its parts that hold none, as (field, holds)
    pairs: a part without any tensor is named once, not element by element ("batch['path']",
    "list of 32 str"). Tensors anywhere in dicts, tuples and lists are found."""
    tensors, bare = [], []

    def walk(o, w):
        if isinstance(o, torch.Tensor):
            tensors.append(o)
        elif not _has_tensor(o, torch):
            bare.append((w, _holds(o)))
        elif isinstance(o, collections.abc.Mapping):
            for k, v in o.items():
                walk(v, _field(w, k))
        else:  # a tuple or list holding a tensor somewhere
            for i, v in enumerate(o):
                walk(v, f"{w}[{i}]")

    walk(obj, where)
    return tensors, bare


def tensor_bytes(tensors):
    """Bytes of the tensors' elements (numel x element size), B."""
    return sum(t.numel() * t.element_size() for t in tensors)

"""Fidelity benchmark Dataset 4: a Hugging Face `datasets` table in Arrow, memory-mapped, with a
transform. make(paths) builds (once) an Arrow dataset of one row per sample file, holding the file's
bytes ("data", large_binary) and its index ("label", int64), saved with save_to_disk as one Arrow
file; every later make(paths) over the same files (same paths, sizes and modification times) loads
it again with load_from_disk, which memory-maps that file. set_transform turns each row into a
sample: its bytes as a uint8 tensor reduced to a 256-bin byte histogram (int64, a checksum-like
reduction over every byte) and its label. default_collate stacks a batch into a B x 256 tensor and
B labels. Needs `datasets` (tools/setup --bench-venv puts it in .venv-bench/).

The cache is the directory hf_arrow_cache beside the files' common directory (for --data DIR:
DIR/../hf_arrow_cache; outside DIR, so that the files listed stay the sample files), one
subdirectory per set of files; HF_ARROW_CACHE names another (give it where every file sits in one
subdirectory of DIR: the common directory is then that subdirectory, and the cache would land in DIR). A list of paths with repeats (the
crowded passes of `ioprobe calibrate`) selects rows of the table built over its distinct files.

What the real loader reads, and so what `ioprobe run --calibration` can predict of it: the
DataLoader's workers read no file. torch 1.13's fetcher calls the table's __getitems__ with a
batch's indices; the rows' bytes are copied out of one mapped Arrow file, page faults rather than
read calls, a batch's rows in one transform call. ioprobe emulates a loader that reads each sample's
own file (open, read, close). The CPU the Dataset costs (the copies out of the mapping, the
transform, the collate) is what `ioprobe calibrate` measures, so where the bytes are already in
memory (a tmpfs, or a warm page cache) both tools copy memory and the prediction holds as well as
for a Dataset of plain files. From cold storage they differ: the mapping faults in 4 KiB pages (with
the kernel's readahead) in the order the sampler picks rows, scattered over one large file, where
ioprobe reads whole files with one request each; the rate ioprobe gives there is that of the files,
not of the Arrow file.
"""
import hashlib
import os
import shutil

import datasets
import torch

BATCH_ROWS = 512  # rows per in-memory chunk while building the table (bounds the build's memory)


def _cache_root(distinct):
    given = os.environ.get("HF_ARROW_CACHE")
    if given:
        return given
    return os.path.join(os.path.dirname(os.path.commonpath([os.path.dirname(p) for p in distinct])), "hf_arrow_cache")


def _key(distinct):
    """A digest of the files: their paths, sizes and modification times (a changed file, a new table)."""
    h = hashlib.sha256()
    for p in distinct:
        st = os.stat(p)
        h.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def _build(distinct, where):
    """One row per file (its bytes and its index), written with save_to_disk as one Arrow file;
    built in a scratch directory renamed into place, so a table found is complete."""
    features = datasets.Features({"data": datasets.Value("large_binary"), "label": datasets.Value("int64")})
    parts = []
    for lo in range(0, len(distinct), BATCH_ROWS):
        rows = {"data": [], "label": []}
        for i, p in enumerate(distinct[lo:lo + BATCH_ROWS], start=lo):
            with open(p, "rb") as f:
                rows["data"].append(f.read())
            rows["label"].append(i)
        parts.append(datasets.Dataset.from_dict(rows, features=features))
    table = datasets.concatenate_datasets(parts)
    tmp = f"{where}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    table.save_to_disk(tmp, num_shards=1)
    try:
        os.rename(tmp, where)
    except OSError:  # another process put the same table there first
        shutil.rmtree(tmp, ignore_errors=True)


def to_samples(batch):
    """The transform: rows (a dict of columns, as the table hands them) to samples. Each row's bytes
    become a uint8 tensor reduced to its byte histogram (256 counts, int64)."""
    hists = [torch.bincount(torch.frombuffer(bytearray(b), dtype=torch.uint8), minlength=256) for b in batch["data"]]
    return {"hist": hists, "label": torch.as_tensor(batch["label"], dtype=torch.int64)}


def make(paths):
    datasets.disable_progress_bars()  # the build's and loads' bars would fill calibrate's stderr
    distinct = list(dict.fromkeys(paths))
    where = os.path.join(_cache_root(distinct), _key(distinct))
    if not os.path.isdir(where):
        os.makedirs(os.path.dirname(where), exist_ok=True)
        _build(distinct, where)
    table = datasets.load_from_disk(where)  # memory-maps its Arrow file
    if len(paths) != len(distinct):
        row = {p: i for i, p in enumerate(distinct)}
        table = table.select([row[p] for p in paths])
    table.set_transform(to_samples)
    return table

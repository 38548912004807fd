"""Fidelity benchmark Dataset 2: one flat tensor per batch. Samples are the files' bytes; the
collate concatenates them into one uint8 tensor plus their lengths, built in shared memory in the
worker as default_collate does (tools/bench_dataloader.py's Dataset), under torch 1.13 and 2.x."""
import os

import torch
from torch.utils.data import Dataset, get_worker_info


class FileBytes(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb", buffering=0) as f:
            size = os.fstat(f.fileno()).st_size
            t = torch.empty(size, dtype=torch.uint8)
            f.readinto(memoryview(t.numpy()))
        return t


def make(paths):
    return FileBytes(paths)


def collate_fn(batch):
    lengths = torch.tensor([t.numel() for t in batch], dtype=torch.int64)
    out = None
    if get_worker_info() is not None:
        total = int(lengths.sum())
        # As default_collate does: _typed_storage() from torch 2.0 (storage() warns there that
        # TypedStorage is deprecated), storage() before.
        elem = batch[0]
        storage = (elem._typed_storage() if hasattr(elem, "_typed_storage") else elem.storage())._new_shared(total)
        out = batch[0].new(storage).resize_(total)
    return torch.cat(batch, out=out), lengths

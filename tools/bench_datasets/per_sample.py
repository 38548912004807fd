"""Fidelity benchmark Dataset 1: per-sample tensors. Each sample is its file's bytes as a uint8
tensor; collate_fn keeps the batch a list, so each of a batch's tensors crosses to the main process
as its own shared-memory segment (a common pattern for variable-size samples)."""
import torch
from torch.utils.data import Dataset


class FileTensors(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)


def make(paths):
    return FileTensors(paths)


def collate_fn(batch):
    return batch

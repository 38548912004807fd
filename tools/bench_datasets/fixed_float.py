"""Fidelity benchmark Dataset 3: fixed-size float tensors, as after a decode and a crop. Each sample
is the file's first 3 x 64 x 64 bytes (zero-padded) turned into a normalized float32 image and a
label; torch's default_collate stacks them (a 12.6 MB batch of 256), so pin_memory has real work."""
import torch
from torch.utils.data import Dataset

SHAPE = (3, 64, 64)
N = 3 * 64 * 64
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


class Crops(Dataset):
    def __init__(self, paths):
        self.paths = paths

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            b = f.read(N)
        t = torch.zeros(N, dtype=torch.uint8)
        t[: len(b)] = torch.frombuffer(bytearray(b), dtype=torch.uint8)
        img = (t.view(SHAPE).float() / 255.0 - MEAN) / STD
        return img, i % 1000


def make(paths):
    return Crops(paths)

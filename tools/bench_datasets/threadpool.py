"""Fidelity benchmark pipeline: a thread pipeline, not a DataLoader. A concurrent.futures
ThreadPoolExecutor of num_threads threads in this one process maps a decode over the files, and
this process cuts the samples into batches (lists of tensors, as per_sample.py's collate keeps
them). The decode reads the file (the GIL released in the read), hashes it with BLAKE2b (hashlib
releases the GIL for inputs over 2 KiB), copies it into a uint8 tensor, and walks its first 2 KiB
in Python (holding the GIL): a decode part of which holds the GIL and part not, as a Pillow or
torchvision decode with some Python around it does."""
import hashlib
from concurrent.futures import ThreadPoolExecutor

import torch


def decode(path):
    with open(path, "rb", buffering=0) as f:
        data = f.read()
    digest = hashlib.blake2b(data).digest()
    t = torch.frombuffer(bytearray(data), dtype=torch.uint8)
    header = sum(b ^ digest[0] for b in data[:2048])
    return t if header >= 0 else None


def make(paths, num_threads, batch_size=256):
    with ThreadPoolExecutor(max_workers=num_threads) as ex:
        batch = []
        for t in ex.map(decode, paths):
            batch.append(t)
            if len(batch) == batch_size:
                yield batch
                batch = []
        if batch:
            yield batch

"""Four small real data loaders for tools/bench-replay, and the datasets they read.

  python3 bench_replay_loaders.py gen DIR            write the four datasets under DIR
  python3 bench_replay_loaders.py run KIND DIR       run one loader over DIR, print its elapsed seconds
  python3 bench_replay_loaders.py evict DIR          drop DIR's files from the page cache (fdatasync + FADV_DONTNEED)

KIND: torch-pil (map-style PyTorch Dataset, PIL JPEG decode, DataLoader with 2 workers, a 10 ms
training step per batch), fromfile (numpy.fromfile of whole files, stdio reads), tar (a
webdataset-style tar shard stream read with tarfile), mmap (np.load(mmap_mode='r'), random row
batches). Every loader is deterministic (fixed seeds) so runs read the same bytes.
"""
import io
import os
import sys
import tarfile
import time

import numpy as np

JPEGS, TORCH_BATCH, TORCH_WORKERS, STEP_S = 240, 16, 2, 0.010
BINS, BIN_FLOATS = 160, 128 * 1024          # 160 files of 512 KiB
SHARDS, MEMBERS, MEMBER_BYTES = 4, 80, 96 * 1024
ROWS, COLS, MMAP_BATCHES, MMAP_BATCH = 16384, 1024, 1000, 64   # a 64 MiB .npy
EPOCHS = 3  # passes over the data of fromfile and tar (the first from the device when cold), torch-pil: 2


def gen(root):
    rng = np.random.default_rng(7)
    jp = os.path.join(root, "jpeg")
    os.makedirs(jp, exist_ok=True)
    try:
        from PIL import Image
        for i in range(JPEGS):
            img = (rng.random((224, 224, 3)) * 255).astype(np.uint8)
            Image.fromarray(img).save(os.path.join(jp, f"{i:05d}.jpg"), quality=90)
    except ImportError:
        pass
    bp = os.path.join(root, "bin")
    os.makedirs(bp, exist_ok=True)
    for i in range(BINS):
        rng.random(BIN_FLOATS, dtype=np.float32).tofile(os.path.join(bp, f"{i:05d}.bin"))
    tp = os.path.join(root, "tar")
    os.makedirs(tp, exist_ok=True)
    for s in range(SHARDS):
        with tarfile.open(os.path.join(tp, f"shard-{s:03d}.tar"), "w") as tf:
            for m in range(MEMBERS):
                data = rng.bytes(MEMBER_BYTES)
                info = tarfile.TarInfo(f"{s:03d}{m:05d}.bin")
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    mp = os.path.join(root, "mmap")
    os.makedirs(mp, exist_ok=True)
    np.save(os.path.join(mp, "table.npy"), rng.random((ROWS, COLS), dtype=np.float32))
    os.sync()


def run_torch_pil(root):
    import torch
    from PIL import Image

    files = sorted(os.path.join(root, "jpeg", f) for f in os.listdir(os.path.join(root, "jpeg")))

    class Jpegs(torch.utils.data.Dataset):
        def __len__(self):
            return len(files)

        def __getitem__(self, i):
            with Image.open(files[i]) as im:
                a = np.asarray(im.convert("RGB").resize((112, 112)), dtype=np.uint8)
            return torch.from_numpy(a.copy())

    g = torch.Generator()
    g.manual_seed(11)
    loader = torch.utils.data.DataLoader(Jpegs(), batch_size=TORCH_BATCH, shuffle=True, generator=g,
                                         num_workers=TORCH_WORKERS)
    total = 0
    for _ in range(EPOCHS - 1):
        for batch in loader:
            total += int(batch.shape[0])
            time.sleep(STEP_S)  # the training step
    return total


def run_fromfile(root):
    d = os.path.join(root, "bin")
    s = 0.0
    for _ in range(EPOCHS):
        for f in sorted(os.listdir(d)):
            a = np.fromfile(os.path.join(d, f), dtype=np.float32)
            s += float(np.sort(a[:16384]).sum())  # per-sample compute
    return s


def run_tar(root):
    d = os.path.join(root, "tar")
    n = 0
    for _ in range(EPOCHS):
        for shard in sorted(os.listdir(d)):
            with tarfile.open(os.path.join(d, shard), mode="r|") as tf:
                for m in tf:
                    data = tf.extractfile(m).read()
                    n += int(np.sort(np.frombuffer(data, dtype=np.uint8)[:32768]).astype(np.int64).sum() > 0)
    return n


def run_mmap(root):
    arr = np.load(os.path.join(root, "mmap", "table.npy"), mmap_mode="r")
    rng = np.random.default_rng(5)
    s = 0.0
    for _ in range(MMAP_BATCHES):
        idx = np.sort(rng.choice(arr.shape[0], MMAP_BATCH, replace=False))
        s += float(arr[idx].sum())
    return s


def evict(root):
    for dirpath, _, names in os.walk(root):
        for n in names:
            fd = os.open(os.path.join(dirpath, n), os.O_RDONLY)
            try:
                os.fdatasync(fd)
            except OSError:
                pass
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "gen":
        gen(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "evict":
        evict(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "run":
        fn = {"torch-pil": run_torch_pil, "fromfile": run_fromfile, "tar": run_tar, "mmap": run_mmap}[sys.argv[2]]
        t0 = time.monotonic()
        fn(sys.argv[3])
        print(f"{time.monotonic() - t0:.3f}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

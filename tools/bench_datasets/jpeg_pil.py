"""Fidelity benchmark Dataset 3: ImageNet-style JPEG decode with PIL and a torchvision-free
RandomResizedCrop(224) + RandomHorizontalFlip: each sample is its file decoded by PIL (Debian's
python3-pil, libjpeg-turbo underneath), a random crop of 8%..100% of the area at an aspect ratio
of 3/4..4/3 resized to 224 x 224 (bilinear, in one PIL resize call with a box), flipped half the
time, returned as a 3 x 224 x 224 uint8 tensor (PILToTensor: normalisation is left to the GPU).
default_collate stacks a batch into one B x 3 x 224 x 224 tensor in the worker's shared memory.
Needs JPEG files: `ioprobe gen --content jpeg` (tools/bench-calibration generates them)."""
import math
import random

import torch
from PIL import Image
from torch.utils.data import Dataset

SIZE = 224
SCALE = (0.08, 1.0)            # torchvision RandomResizedCrop's defaults
RATIO = (3.0 / 4.0, 4.0 / 3.0)


def crop_box(w, h, rng):
    """A RandomResizedCrop box (left, top, right, bottom) as torchvision draws it: 10 tries at a
    random area and log-uniform aspect ratio, else the centre crop at the nearest allowed ratio."""
    area = w * h
    for _ in range(10):
        target = area * rng.uniform(*SCALE)
        ratio = math.exp(rng.uniform(math.log(RATIO[0]), math.log(RATIO[1])))
        cw = int(round(math.sqrt(target * ratio)))
        ch = int(round(math.sqrt(target / ratio)))
        if 0 < cw <= w and 0 < ch <= h:
            x = rng.randint(0, w - cw)
            y = rng.randint(0, h - ch)
            return (x, y, x + cw, y + ch)
    r = w / h
    if r < RATIO[0]:
        cw, ch = w, int(round(w / RATIO[0]))
    elif r > RATIO[1]:
        cw, ch = int(round(h * RATIO[1])), h
    else:
        cw, ch = w, h
    x, y = (w - cw) // 2, (h - ch) // 2
    return (x, y, x + cw, y + ch)


class JpegCrops(Dataset):
    def __init__(self, paths):
        self.paths = paths
        self.rng = random.Random(0)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with Image.open(self.paths[i]) as im:
            im = im.convert("RGB")
            box = crop_box(im.width, im.height, self.rng)
            out = im.resize((SIZE, SIZE), Image.BILINEAR, box=box)
        if self.rng.random() < 0.5:
            out = out.transpose(Image.FLIP_LEFT_RIGHT)
        t = torch.frombuffer(bytearray(out.tobytes()), dtype=torch.uint8).view(SIZE, SIZE, 3)
        return t.permute(2, 0, 1).contiguous()


def make(paths):
    return JpegCrops(paths)

"""Models in the shapes of well-known networks, written once against a torch-like library (dynamo_lite or torch).

``MODELS[name](lib)`` returns ``(model, inputs)`` built with ``lib.nn`` (``lib`` is
``dynamo_lite`` or ``torch``): ResNet-18, a U-Net, MobileNetV2, ShuffleNetV2, a
fast-neural-style TransformerNet, minGPT, a makemore MLP, a TCN, and CLIP's two towers
(a ViT and a ModifiedResNet with attention pooling). Widths and inputs are cut down (batch
1-4, small images) so that one timing round of all of them takes seconds; the layer kinds,
their order and the channel progressions follow the originals. Parameters come from the
library's own initialisers under a fixed seed; ``copy_weights`` gives a torch twin the same.
"""
from __future__ import annotations

import math

import numpy as np


def resnet18(lib, width: int = 32, image: int = 64, batch: int = 2):
    nn, F = lib.nn, lib.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + (x if self.down is None else self.down(x)))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            w = width
            self.stem = nn.Sequential(nn.Conv2d(3, w, 7, 2, 3, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            chans = [w, w, 2 * w, 4 * w, 8 * w]
            blocks = []
            for i in range(4):
                blocks += [BasicBlock(chans[i], chans[i + 1], 1 if i == 0 else 2), BasicBlock(chans[i + 1], chans[i + 1], 1)]
            self.blocks = nn.Sequential(*blocks)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8 * w, 100)

        def forward(self, x):
            return self.fc(self.pool(self.blocks(self.stem(x))).flatten(1))

    return ResNet18(), [lib.randn(batch, 3, image, image)]


def unet(lib, width: int = 16, image: int = 64, batch: int = 1):
    nn = lib.nn

    def double_conv(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            c = [width * 2 ** i for i in range(5)]
            self.inc = double_conv(3, c[0])
            self.downs = nn.ModuleList([double_conv(c[i], c[i + 1]) for i in range(4)])
            self.ups = nn.ModuleList([nn.ConvTranspose2d(c[i + 1], c[i], 2, stride=2) for i in reversed(range(4))])
            self.up_convs = nn.ModuleList([double_conv(2 * c[i], c[i]) for i in reversed(range(4))])
            self.pool = nn.MaxPool2d(2)
            self.out = nn.Conv2d(c[0], 2, 1)

        def forward(self, x):
            skips = [self.inc(x)]
            for down in self.downs:
                skips.append(down(self.pool(skips[-1])))
            x = skips.pop()
            for up, conv in zip(self.ups, self.up_convs):
                x = conv(lib.cat([skips.pop(), up(x)], 1))
            return self.out(x)

    return UNet(), [lib.randn(batch, 3, image, image)]


def mobilenet_v2(lib, width: float = 0.5, image: int = 64, batch: int = 2):
    nn = lib.nn

    def conv_bn(cin, cout, k, stride, groups=1, act=True):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        return nn.Sequential(*layers, nn.ReLU6()) if act else nn.Sequential(*layers)

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            layers = [conv_bn(cin, hidden, 1, 1)] if expand != 1 else []
            layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden), conv_bn(hidden, cout, 1, 1, act=False)]
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                        (6, 320, 1, 1)]
            cin = int(32 * width)
            layers = [conv_bn(3, cin, 3, 2)]
            for t, c, n, s in settings:
                cout = max(8, int(c * width))
                for i in range(n):
                    layers.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                    cin = cout
            layers.append(conv_bn(cin, 640, 1, 1))
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Linear(640, 100)

        def forward(self, x):
            return self.classifier(self.features(x).mean((2, 3)))

    return MobileNetV2(), [lib.randn(batch, 3, image, image)]


def shufflenet_v2(lib, image: int = 64, batch: int = 2):
    nn, F = lib.nn, lib.nn.functional

    def shuffle(x, groups):
        n, c, h, w = x.shape
        return x.view(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)

    def branch(cin, cout, stride):
        return nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, stride, 1, groups=cout, bias=False), nn.BatchNorm2d(cout),
                             nn.Conv2d(cout, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

    class Unit(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.stride = stride
            half = cout // 2
            if stride == 1:
                self.right = branch(half, half, 1)
            else:
                self.left = nn.Sequential(nn.Conv2d(cin, cin, 3, 2, 1, groups=cin, bias=False), nn.BatchNorm2d(cin),
                                          nn.Conv2d(cin, half, 1, bias=False), nn.BatchNorm2d(half), nn.ReLU())
                self.right = branch(cin, half, 2)

        def forward(self, x):
            if self.stride == 1:
                a, b = x.chunk(2, dim=1)
                out = lib.cat([a, self.right(b)], 1)
            else:
                out = lib.cat([self.left(x), self.right(x)], 1)
            return shuffle(out, 2)

    class ShuffleNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            chans = [24, 48, 96, 192]
            self.stem = nn.Sequential(nn.Conv2d(3, 24, 3, 2, 1, bias=False), nn.BatchNorm2d(24), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            units, cin = [], 24
            for cout, repeat in zip(chans[1:], (4, 8, 4)):
                units.append(Unit(cin, cout, 2))
                units += [Unit(cout, cout, 1) for _ in range(repeat - 1)]
                cin = cout
            self.units = nn.Sequential(*units)
            self.head = nn.Sequential(nn.Conv2d(cin, 512, 1, bias=False), nn.BatchNorm2d(512), nn.ReLU())
            self.fc = nn.Linear(512, 100)

        def forward(self, x):
            return self.fc(F.adaptive_avg_pool2d(self.head(self.units(self.stem(x))), 1).flatten(1))

    return ShuffleNetV2(), [lib.randn(batch, 3, image, image)]


def style_transfer(lib, image: int = 64, batch: int = 1):
    nn, F = lib.nn, lib.nn.functional

    class ConvLayer(nn.Module):
        def __init__(self, cin, cout, k, stride, upsample=None):
            super().__init__()
            self.upsample = upsample
            self.pad = nn.ReflectionPad2d(k // 2)
            self.conv = nn.Conv2d(cin, cout, k, stride)

        def forward(self, x):
            if self.upsample:
                x = F.interpolate(x, scale_factor=self.upsample, mode="nearest")
            return self.conv(self.pad(x))

    class Residual(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1, self.in1 = ConvLayer(c, c, 3, 1), nn.InstanceNorm2d(c, affine=True)
            self.conv2, self.in2 = ConvLayer(c, c, 3, 1), nn.InstanceNorm2d(c, affine=True)

        def forward(self, x):
            return x + self.in2(self.conv2(F.relu(self.in1(self.conv1(x)))))

    class TransformerNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.down = nn.Sequential(ConvLayer(3, 16, 9, 1), nn.InstanceNorm2d(16, affine=True), nn.ReLU(),
                                      ConvLayer(16, 32, 3, 2), nn.InstanceNorm2d(32, affine=True), nn.ReLU(),
                                      ConvLayer(32, 64, 3, 2), nn.InstanceNorm2d(64, affine=True), nn.ReLU())
            self.res = nn.Sequential(*[Residual(64) for _ in range(5)])
            self.up = nn.Sequential(ConvLayer(64, 32, 3, 1, upsample=2), nn.InstanceNorm2d(32, affine=True), nn.ReLU(),
                                    ConvLayer(32, 16, 3, 1, upsample=2), nn.InstanceNorm2d(16, affine=True), nn.ReLU(),
                                    ConvLayer(16, 3, 9, 1))

        def forward(self, x):
            return self.up(self.res(self.down(x)))

    return TransformerNet(), [lib.randn(batch, 3, image, image)]


def _attention_block(lib, d, heads, gelu):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x, causal: bool):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            return x + self.out(gelu(self.fc(self.ln2(x))))

    return Block


def min_gpt(lib, d: int = 128, layers: int = 4, heads: int = 4, vocab: int = 512, t: int = 64, batch: int = 4):
    nn, F = lib.nn, lib.nn.functional
    Block = _attention_block(lib, d, heads, lambda x: F.gelu(x, approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(t, d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.shape[1]))
            for block in self.blocks:
                x = block(x, True)
            return self.head(self.ln(x))

    return GPT(), [lib.randint(0, vocab, (batch, t))]


def makemore_mlp(lib, vocab: int = 27, block: int = 8, emb: int = 24, hidden: int = 256, batch: int = 64):
    nn = lib.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab + 1, emb)
            self.net = nn.Sequential(nn.Linear(block * emb, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                     nn.Linear(hidden, vocab))

        def forward(self, idx):
            return self.net(self.emb(idx).view(idx.shape[0], -1))

    return MLP(), [lib.randint(0, vocab + 1, (batch, block))]


def tcn(lib, channels: int = 64, levels: int = 6, length: int = 256, batch: int = 4):
    nn, F = lib.nn, lib.nn.functional

    class TemporalBlock(nn.Module):
        def __init__(self, cin, cout, dilation):
            super().__init__()
            self.pad = 2 * dilation
            self.conv1 = nn.Conv1d(cin, cout, 3, dilation=dilation)
            self.conv2 = nn.Conv1d(cout, cout, 3, dilation=dilation)
            self.down = nn.Conv1d(cin, cout, 1) if cin != cout else None

        def forward(self, x):
            out = F.relu(self.conv1(F.pad(x, (self.pad, 0))))
            out = F.relu(self.conv2(F.pad(out, (self.pad, 0))))
            return F.relu(out + (x if self.down is None else self.down(x)))

    class TCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(*[TemporalBlock(8 if i == 0 else channels, channels, 2 ** i) for i in range(levels)])
            self.out = nn.Linear(channels, 10)

        def forward(self, x):
            return self.out(self.blocks(x)[:, :, -1])

    return TCN(), [lib.randn(batch, 8, length)]


def clip_vit(lib, d: int = 128, layers: int = 4, heads: int = 4, image: int = 64, patch: int = 8, batch: int = 2):
    nn = lib.nn
    Block = _attention_block(lib, d, heads, lambda x: x * lib.sigmoid(1.702 * x))  # QuickGELU
    tokens = (image // patch) ** 2 + 1

    class VisionTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch = nn.Conv2d(3, d, patch, patch, bias=False)
            self.cls = nn.Parameter(lib.randn(d) * 0.02)
            self.pos = nn.Parameter(lib.randn(tokens, d) * 0.02)
            self.ln_pre, self.ln_post = nn.LayerNorm(d), nn.LayerNorm(d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.proj = nn.Linear(d, 64, bias=False)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            x = lib.cat([self.cls.expand(x.shape[0], 1, -1), x], 1) + self.pos
            x = self.ln_pre(x)
            for block in self.blocks:
                x = block(x, False)
            return self.proj(self.ln_post(x[:, 0]))

    return VisionTransformer(), [lib.randn(batch, 3, image, image)]


def clip_resnet(lib, width: int = 16, image: int = 64, batch: int = 2, heads: int = 4):
    nn, F = lib.nn, lib.nn.functional

    class Bottleneck(nn.Module):
        def __init__(self, cin, planes, stride):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(cin, planes, 1, bias=False), nn.BatchNorm2d(planes)
            self.conv2, self.bn2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False), nn.BatchNorm2d(planes)
            self.pool = nn.AvgPool2d(stride) if stride > 1 else None
            self.conv3, self.bn3 = nn.Conv2d(planes, planes * 4, 1, bias=False), nn.BatchNorm2d(planes * 4)
            self.down = None
            if stride > 1 or cin != planes * 4:
                self.down = nn.Sequential(nn.AvgPool2d(stride), nn.Conv2d(cin, planes * 4, 1, bias=False),
                                          nn.BatchNorm2d(planes * 4))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = F.relu(self.bn2(self.conv2(out)))
            if self.pool is not None:
                out = self.pool(out)
            out = self.bn3(self.conv3(out))
            return F.relu(out + (x if self.down is None else self.down(x)))

    class AttentionPool(nn.Module):
        def __init__(self, spatial, d, out):
            super().__init__()
            self.pos = nn.Parameter(lib.randn(spatial * spatial + 1, d) / d ** 0.5)
            self.q, self.k, self.v, self.c = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, out)

        def forward(self, x):
            n, d = x.shape[0], x.shape[1]
            x = x.flatten(2).permute(0, 2, 1)
            x = lib.cat([x.mean(1, keepdim=True), x], 1) + self.pos
            q = self.q(x[:, :1]).view(n, 1, heads, d // heads).transpose(1, 2)
            k = self.k(x).view(n, -1, heads, d // heads).transpose(1, 2)
            v = self.v(x).view(n, -1, heads, d // heads).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v)
            return self.c(a.transpose(1, 2).reshape(n, d))

    class ModifiedResNet(nn.Module):
        def __init__(self):
            super().__init__()
            w = width
            self.stem = nn.Sequential(nn.Conv2d(3, w // 2, 3, 2, 1, bias=False), nn.BatchNorm2d(w // 2), nn.ReLU(),
                                      nn.Conv2d(w // 2, w // 2, 3, padding=1, bias=False), nn.BatchNorm2d(w // 2),
                                      nn.ReLU(), nn.Conv2d(w // 2, w, 3, padding=1, bias=False), nn.BatchNorm2d(w),
                                      nn.ReLU(), nn.AvgPool2d(2))
            layers, cin = [], w
            for i, blocks in enumerate((2, 2, 2, 2)):
                planes = w * 2 ** i
                for j in range(blocks):
                    layers.append(Bottleneck(cin, planes, 2 if j == 0 and i > 0 else 1))
                    cin = planes * 4
            self.layers = nn.Sequential(*layers)
            self.attnpool = AttentionPool(image // 32, cin, 64)

        def forward(self, x):
            return self.attnpool(self.layers(self.stem(x)))

    return ModifiedResNet(), [lib.randn(batch, 3, image, image)]


MODELS = {"resnet18": resnet18, "unet": unet, "mobilenet_v2": mobilenet_v2, "shufflenet_v2": shufflenet_v2,
          "style_transfer": style_transfer, "min_gpt": min_gpt, "makemore_mlp": makemore_mlp, "tcn": tcn,
          "clip_vit": clip_vit, "clip_resnet": clip_resnet}


def copy_weights(source, target, torch) -> None:
    """Load ``source``'s (a dynamo_lite model's) parameters and buffers into its torch twin ``target``."""
    state = {k: torch.from_numpy(np.array(v.numpy())) for k, v in source.state_dict().items()}
    target.load_state_dict(state)


def parameter_count(model) -> int:
    return sum(math.prod(p.shape) for p in model.parameters())

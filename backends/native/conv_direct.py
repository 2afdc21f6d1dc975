"""conv2d as a direct convolution in C, with its bias, a following relu and max_pool2d computed on its tiles.

NOTE: [direct conv2d] Instead of gathering every window into an im2col matrix and handing
it to gemm, the kernel keeps a tile of outputs in vector registers: ``OB`` vectors of
output channels (``V`` lanes each, 32-byte vectors) times the conv2d pixels of ``Q``
pooled outputs (``KP x KP`` conv pixels each; ``KP`` is 1 without a pooling). For every
tap and input channel it loads the weights of the tile's channels once and multiplies
them by each pixel's input value (one broadcast), ``OB * Q * KP * KP`` fused multiply-adds.
The batch is first staged into a zero-padded ``(N, H+2PH, W+2PW, C)`` copy (any input
strides; the padding's taps read 0, as eager's gather writes them), the weights into
``(KH, KW, C, O)`` with ``O`` rounded up to whole vectors by zeros; so the inner loop
has no bounds checks and no layout cases. At the end of a tile the bias is added, each
pooling window's maximum taken (eager's ``maximum``: NaN wins), then the relu applied
(NaN kept, as eager's): the relu of a maximum is the maximum of the relus, NaN and signed
zeros included. (The bias cannot wait for the maximum: ``-inf + inf`` is NaN where
``max(-inf, c) + inf`` is not.) The un-pooled tensor is written only when something else
reads it (``keep``). Stores follow the output's strides (NCHW or channels_last alike).

Numerics: the products are summed tap by tap, channel by channel, in fused multiply-adds,
where eager's gemm sums the same ``C*KH*KW`` products in BLAS's blocked order: the bits
differ (relative error of the order of the reduction length times the unit roundoff),
so tests compare with a tolerance; NaN and infinity propagate as in any sum of the
products, the pooling's and relu's NaN rule is eager's. The accumulator budget is 16
vectors when AVX-512 gives 32 vector registers, else 12 (``#if`` in the source, so one
source serves both).
"""
from __future__ import annotations

from dataclasses import dataclass

from .kernel import PARALLEL_MIN_ELEMENTS

VECTOR_BYTES = 32
BUDGETS = (("defined(__AVX512F__)", 16), ("1", 12))  # accumulator vectors by target, first match wins
FMA_INTRINSICS = {"float": ("_mm256_fmadd_ps", "__m256", "int32_t"), "double": ("_mm256_fmadd_pd", "__m256d", "int64_t")}
# Output vectors per tile. conv2d (32, 16, 16, 16) -> 32 + relu + pool 2, 1 thread, ms of CPU: 2 x 8 pixels 0.79,
# 4 x 4 pixels 1.38, 2 x 12 pixels (a budget of 24) 0.90; 64-byte vectors 0.77, but 0.47 instead of 0.40 for 3 -> 16.
MAX_BLOCK = 2
MAX_POOL_KERNEL = 3  # a wider pooling window keeps its own kernel (its accumulators would not fit)


@dataclass
class DirectConv:
    """One direct conv2d kernel: what it computes and its operands.

    Attributes:
        operands: ``[x, weight, (bias,) (conv2d,) result]``: the result is the conv2d's, or
            the relu's or pooling's when the kernel computes them; the conv2d's own result is
            written too when ``keep`` (something else reads it).
        constants: conv2d's kernel, stride, padding, dilation (pairs).
        channels: (O, C) of the weight (baked into the source).
        pool: the pooling window (= its stride) computed on the tiles, 1 for none.
        relu: whether a relu is applied before the pooling.
    """

    node: object
    operands: list
    constants: tuple
    channels: tuple
    ctype: str
    pool: int = 1
    relu: bool = False
    bias: bool = False
    keep: bool = False

    @property
    def lanes(self) -> int:
        return VECTOR_BYTES // (4 if self.ctype == "float" else 8)

    @property
    def padded_outputs(self) -> int:
        """O rounded up to whole vectors."""
        return -(-self.channels[0] // self.lanes) * self.lanes

    def scratch_elements(self, batch: int, height: int, width: int) -> int:
        """Packed weights and bias, then the staged zero-padded input of every image."""
        (kh, kw), _, (ph, pw), _ = self.constants
        o, c = self.padded_outputs, self.channels[1]
        return kh * kw * c * o + o + batch * (height + 2 * ph) * (width + 2 * pw) * c


def tiles(vectors: int, pool: int, budget: int) -> list:
    """``[(OB, Q), ...]``: the tile shapes a kernel uses for ``vectors`` output vectors under an
    accumulator ``budget``: the full block, then the block of the remaining vectors."""
    block = max(1, min(vectors, MAX_BLOCK, budget // (pool * pool)))
    shapes = [(block, max(1, budget // (block * pool * pool)))]
    if vectors % block:
        rest = vectors % block
        shapes.append((rest, max(1, budget // (rest * pool * pool))))
    return shapes


def direct_source(name: str, call: DirectConv) -> str:
    """The C function ``name(const int64_t* g, int threads, char* p...)`` of ``call`` (NOTE: [direct conv2d])."""
    vectors = call.padded_outputs // call.lanes
    variants = []
    for condition, budget in BUDGETS:
        shapes = tiles(vectors, call.pool, budget)
        functions = [line for ob, q in shapes for count in sorted({q, 1}, reverse=True)
                     for line in _tile_function(name, call, ob, count)]
        variants += [f"#{'if' if not variants else 'elif'} {condition}", *functions,
                     *_main_function(name, call, shapes)]
    return "\n".join(_helpers(name, call) + variants + ["#endif"])


def _helpers(name: str, call: DirectConv) -> list:
    t, v = call.ctype, call.lanes
    fma, vector, mask = FMA_INTRINSICS[t]
    return [
        "#if defined(__GNUC__) && !defined(__clang__)",  # without AVX: a note that vector returns change the ABI
        "#pragma GCC diagnostic ignored \"-Wpsabi\"",
        "#endif",
        f"typedef {t} {name}_v __attribute__((vector_size({VECTOR_BYTES})));",
        f"typedef {mask} {name}_m __attribute__((vector_size({VECTOR_BYTES})));",
        "#if defined(__FMA__) && defined(__x86_64__)",
        "#include <immintrin.h>",
        f"#define {name}_fma(a, b, c) (({name}_v){fma}(({vector})(a), ({vector})(b), ({vector})(c)))",
        "#else",
        f"#define {name}_fma(a, b, c) ((a) * (b) + (c))",
        "#endif",
        f"static inline {name}_v {name}_ld(const {t}* p) {{ {name}_v v; __builtin_memcpy(&v, p, sizeof v); return v; }}",
        f"static inline void {name}_st({t}* p, {name}_v v) {{ __builtin_memcpy(p, &v, sizeof v); }}",
        f"static inline {name}_v {name}_splat({t} x) {{ return ({name}_v){{{', '.join(['x'] * v)}}}; }}",
        "/* eager's maximum per lane (dl_max: NaN wins, then a >= b ? a : b) and relu ((v > 0 || v != v) ? v : 0) */",
        f"static inline {name}_v {name}_max({name}_v a, {name}_v b) {{",
        f"  const {name}_m pick = (a != a) | ((b == b) & (a >= b));",
        f"  return ({name}_v)((pick & ({name}_m)a) | (~pick & ({name}_m)b));",
        "}",
        f"static inline {name}_v {name}_relu({name}_v a) {{ return ({name}_v)(((a > ({name}_v){{0}}) | (a != a)) & ({name}_m)a); }}",
    ]


def _tile_function(name: str, call: DirectConv, ob: int, q: int) -> list:
    """``name_tOB_Q(xt, rs, wt, bt, res, raw)``: the tile of ``OB`` output vectors by ``Q`` pooled pixels
    whose first staged input element is ``xt`` (``rs`` elements between staged rows); ``res`` gets the
    results, pixel by pixel, ``OB*V`` lanes each, and ``raw`` the conv2d's (``keep``: KP rows of Q*KP)."""
    (kh, kw), (sh, sw), _, (dh, dw) = call.constants
    o_pad, c = call.padded_outputs, call.channels[1]
    v, kp, t = call.lanes, call.pool, call.ctype
    pixels = [(r, col) for r in range(kp) for col in range(q * kp)]
    acc = {(p, b): f"a{p}_{b}" for p in range(len(pixels)) for b in range(ob)}
    fma = [f"        {{ const {name}_v x = {name}_splat(x{r}[e + {col * sw * c}]);"
           + "".join(f" {acc[p, b]} = {name}_fma(w{b}, x, {acc[p, b]});" for b in range(ob)) + " }"
           for p, (r, col) in enumerate(pixels)]
    epilogue = []
    for qq in range(q):
        for b in range(ob):
            # The relu after the window's maximum: the maximum of the relus (NOTE: [direct conv2d]).
            window = [f"{acc[pixels.index((r, qq * kp + s)), b]} + bias{b}" for r in range(kp) for s in range(kp)]
            epilogue.append(f"  m = {window[0]};")
            epilogue += [f"  m = {name}_max(m, {e});" for e in window[1:]]
            epilogue += [f"  m = {name}_relu(m);"] if call.relu else []
            epilogue.append(f"  {name}_st(res + {qq * ob * v + b * v}, m);")
    raw = [f"  {name}_st(raw + {p * ob * v + b * v}, {acc[p, b]} + bias{b});"
           for p in range(len(pixels)) for b in range(ob)] if call.keep else []
    return [
        f"static inline __attribute__((always_inline)) void {name}_t{ob}_{q}(const {t}* restrict xt, const int64_t rs, "
        f"const {t}* restrict wt, const {t}* restrict bt, {t}* restrict res, {t}* restrict raw) {{",
        f"  {name}_v {', '.join(f'{a} = {{0}}' for a in acc.values())};",
        f"  for (int64_t i = 0; i < {kh}; i++) {{",
        *[f"    const {t}* restrict x{r} = xt + (i * {dh} + {r * sh}) * rs;" for r in range(kp)],
        f"    for (int64_t j = 0; j < {kw}; j++) {{",
        f"      const {t}* restrict w = wt + (i * {kw} + j) * {c * o_pad};",
        f"      int64_t e = j * {dw * c};",
        f"      for (int64_t c = 0; c < {c}; c++, e++, w += {o_pad}) {{",
        f"        const {name}_v {', '.join(f'w{b} = {name}_ld(w + {b * v})' for b in range(ob))};",
        *fma,
        "      }", "    }", "  }",
        f"  const {name}_v {', '.join(f'bias{b} = {name}_ld(bt + {b * v})' for b in range(ob))};",
        f"  {name}_v m;",
        *raw,
        *epilogue,
        "}"]


def _main_function(name: str, call: DirectConv, shapes: list) -> list:
    """Stage the weights, bias and padded images, then run the tiles of every (image, vector block,
    pooled row), the last tile of a row shifted left to end at the row's end."""
    (kh, kw), (sh, sw), (ph, pw), _ = call.constants
    (outs, c), o_pad = call.channels, call.padded_outputs
    v, kp, t = call.lanes, call.pool, call.ctype
    (ob, q), tail = shapes[0], (shapes[1] if len(shapes) > 1 else None)
    blocks = -(-(o_pad // v) // ob)
    bias = f"({t}*)p2" if call.bias else "0"
    out = f"p{len(call.operands) - 1}"
    keep = (f" {name}_raw(c0, raw, ({{at}}) * {kp}, {{count}} * {kp}, lanes, {{block}} * {v}, cc, chs, cws);"
            if call.keep else "")

    def row(block, count) -> list:
        """The tiles of one pooled row with ``block`` vectors, ``count`` pooled pixels each."""
        def run(at, count=count) -> str:
            return (f"{name}_t{block}_{count}(xrow + ({at}) * {kp * sw * c}, rs, wt, bt, res, raw); "
                    f"{name}_put(o0, res, {at}, {count}, lanes, {block * v}, oc, ows);"
                    + keep.format(at=at, count=count, block=block))

        return [f"        int64_t q0 = 0;",
                f"        for (; q0 + {count} <= PW; q0 += {count}) {{ {run('q0')} }}",
                f"        if (q0 < PW && PW >= {count}) {{ {run(f'PW - {count}')} }}",
                f"        else for (; q0 < PW; q0++) {{ {run('q0', 1)} }}" if count > 1 else ""]

    body = row(ob, q)
    if tail is not None:
        body = [f"      if (b0 + {ob} <= {o_pad // v}) {{", *body, "      } else {", *row(*tail), "      }"]
    else:
        body = ["      {", *body, "      }"]
    work = f"N * PH * PW * {outs * c * kh * kw * kp * kp}"
    return [
        f"static inline void {name}_put({t}* o0, const {t}* res, int64_t q0, int64_t count, int64_t lanes, int64_t width, "
        "int64_t oc, int64_t ows) {",
        "  if (oc == 1) {",
        "    for (int64_t q = 0; q < count; q++) for (int64_t l = 0; l < lanes; l++) o0[(q0 + q) * ows + l] = res[q * width + l];",
        "  } else {",
        "    for (int64_t l = 0; l < lanes; l++) for (int64_t q = 0; q < count; q++) o0[l * oc + (q0 + q) * ows] = res[q * width + l];",
        "  }",
        "}",
        *(_raw_store(name, t, kp) if call.keep else []),
        f"void {name}(const int64_t* g, int threads, {', '.join(f'char* p{k}' for k in range(len(call.operands) + 1))}) {{",
        "  const int64_t N = g[0], H = g[2], W = g[3], xn = g[4], xc = g[5], xh = g[6], xw = g[7];",
        "  const int64_t PH = g[10], PW = g[11], on = g[12], oc = g[13], ohs = g[14], ows = g[15];",
        "  const int64_t ws0 = g[16], ws1 = g[17], ws2 = g[18], ws3 = g[19], bs = g[20];",
        *(["  const int64_t cn = g[21], cc = g[22], chs = g[23], cws = g[24];"] if call.keep else []),
        f"  const int64_t Hp = H + {2 * ph}, Wp = W + {2 * pw}, rs = Wp * {c}, image = Hp * rs;",
        f"  const {t}* x0 = (const {t}*)p0;",
        f"  const {t}* w0 = (const {t}*)p1;",
        f"  const {t}* b0p = {bias};",
        f"  {t}* wp = ({t}*)p{len(call.operands)};",
        f"  {t}* bp = wp + {kh * kw * c * o_pad};",
        f"  {t}* xs = bp + {o_pad};",
        f"  #pragma omp parallel num_threads(threads) if({work} >= {PARALLEL_MIN_ELEMENTS * 16})",
        "  {",
        "    #pragma omp for schedule(static) nowait",
        f"    for (int64_t r = 0; r < {kh * kw * c}; r++) {{",
        f"      const int64_t i = r / {kw * c}, j = r / {c} % {kw}, c = r % {c};",
        f"      for (int64_t o = 0; o < {o_pad}; o++) wp[r * {o_pad} + o] = o < {outs} ? w0[o * ws0 + c * ws1 + i * ws2 + j * ws3] : ({t})0;",
        "    }",
        "    #pragma omp single nowait",
        f"    for (int64_t o = 0; o < {o_pad}; o++) bp[o] = (b0p && o < {outs}) ? b0p[o * bs] : ({t})0;",
        "    #pragma omp for schedule(static)",
        "    for (int64_t nh = 0; nh < N * Hp; nh++) {",
        f"      const int64_t n = nh / Hp, h = nh % Hp - {ph};",
        f"      {t}* restrict dst = xs + nh * rs;",
        f"      if (h < 0 || h >= H) {{ for (int64_t k = 0; k < rs; k++) dst[k] = ({t})0; continue; }}",
        f"      for (int64_t k = 0; k < {pw * c}; k++) dst[k] = dst[rs - 1 - k] = ({t})0;",
        f"      const {t}* restrict src = x0 + n * xn + h * xh;",
        f"      {t}* restrict inner = dst + {pw * c};",
        f"      if (xc == 1 && xw == {c}) {{ for (int64_t k = 0; k < W * {c}; k++) inner[k] = src[k]; }}",
        f"      else for (int64_t c = 0; c < {c}; c++) for (int64_t w = 0; w < W; w++) inner[w * {c} + c] = src[c * xc + w * xw];",
        "    }",
        "    #pragma omp for schedule(dynamic, 4)",  # a descheduled thread's rows go to the others
        f"    for (int64_t task = 0; task < N * {blocks} * PH; task++) {{",
        f"      const int64_t n = task / ({blocks} * PH), b0 = task / PH % {blocks} * {ob}, pr = task % PH;",
        f"      const {t}* xrow = xs + n * image + pr * {kp * sh} * rs;",
        f"      const {t}* wt = wp + b0 * {v};",
        f"      const {t}* bt = bp + b0 * {v};",
        f"      const int64_t lanes = {outs} - b0 * {v} < {ob * v} ? {outs} - b0 * {v} : {ob * v};",
        f"      {t}* o0 = ({t}*){out} + n * on + pr * ohs + b0 * {v} * oc;",
        f"      {t} res[{max(count * block for block, count in shapes) * v}];",
        *([f"      {t}* c0 = ({t}*)p{len(call.operands) - 2} + n * cn + pr * {kp} * chs + b0 * {v} * cc;",
           f"      {t} raw[{max(count * block for block, count in shapes) * v * kp * kp}];"] if call.keep
          else [f"      {t}* raw = 0;"]),
        *body,
        "    }",
        "  }",
        "}"]


def _raw_store(name: str, t: str, rows: int) -> list:
    """``name_raw``: a tile's conv2d results (``rows`` x ``cols`` pixels from column ``col0``) into the conv2d's tensor."""
    return [
        f"static inline void {name}_raw({t}* c0, const {t}* raw, int64_t col0, int64_t cols, int64_t lanes, int64_t width, "
        "int64_t cc, int64_t chs, int64_t cws) {",
        f"  for (int64_t r = 0; r < {rows}; r++) {{",
        f"    {t}* restrict dst = c0 + r * chs + col0 * cws;",
        f"    const {t}* restrict src = raw + r * cols * width;",
        "    if (cc == 1) {",
        "      for (int64_t p = 0; p < cols; p++) for (int64_t l = 0; l < lanes; l++) dst[p * cws + l] = src[p * width + l];",
        "    } else {",
        "      for (int64_t l = 0; l < lanes; l++) for (int64_t p = 0; p < cols; p++) dst[l * cc + p * cws] = src[p * width + l];",
        "    }",
        "  }",
        "}"]

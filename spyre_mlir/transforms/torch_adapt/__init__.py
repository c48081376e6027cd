"""`torch-adapt`: mathematically equivalent rewrites at the torch level that let the device path
take an op it otherwise could not, or take it in fewer launches. Each rewrite states how exact it
is (fp32 on the host; the device then computes in DL16 either way).

    view.dtype(x, x's dtype) -> x                           exact (a view as the dtype it has)
    pow(x, 1)          -> x                                 exact
    pow(x, 2)          -> x * x                             exact (one rounding, as pow)
    pow(x, 3)          -> (x * x) * x                       <= 1 fp32 ulp apart; what eager's CPU kernel computes
    pow(x, 4)          -> (x * x) * (x * x)                 <= 1 fp32 ulp apart; likewise
    pow(x, -1)         -> reciprocal(x)                     exact
    pow(x, -2)         -> reciprocal(x * x)                 <= 1 fp32 ulp apart
    pow(x, 0.5)        -> sqrt(x)                           exact (both correctly rounded; NaN for x < 0)
    pow(x, -0.5)       -> rsqrt(x)                          <= 1 fp32 ulp apart
    max.dim(x, d, k)   -> amax(x, [d], k) (+ argmax(x, d, k)) exact; the argmax where the indices are read (min.dim alike)
    split_with_sizes(x, sizes, d) -> a slice of x along d per piece
                                                            exact, when the pieces are unpacked
    slice(cat([p_0, ..., p_n], d), d, s, e) -> p_i, or cat([p_i, ..., p_j], d)
                                                            exact, when [s, e) is whole pieces: a merged
                                                            linear's parts, split again by the model
    _softmax(x, d)     -> view(_softmax(view(x, rows), -1))  exact, when the dims after d have extent 1
    bmm(A, B)          -> sum(A * transpose(B), -1, keepdim)  the same products, for B of one column;
                                                            each product stored in DL16 before the sum
    0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
                       -> gelu(x, approximate="tanh")       same formula (gelu_new / gelu_pytorch_tanh);
                                                            roundings of the chain differ by a few fp32 ulp
    op.Tensor(x, c)    -> op.Scalar(x, c)                   exact, for add/sub/mul/div whose other operand
                                                            is a 0-d constant tensor (scalar_tensor(c),
                                                            a 0-d literal) of x's dtype
    reduce(x, [d], keepdim=False) -> view(reduce(x, [d], keepdim=True), shape)
                                                            exact, for mean.dim / sum.dim_IntList / amax / amin
    f(view(x, s))      -> view(f(x), s)                     exact (an element-wise op commutes with a
                                                            reshape), for f a unary element-wise op (relu,
                                                            gelu, exp, ..., x op c for add/sub/mul/div.Scalar),
                                                            and for add/sub/mul/div.Tensor,
    g(view(a, s), view(b, s)) -> view(g(a, b), s)           minimum, maximum when a and b have one shape
                                                            and the view keeps the last dim (a free view):
                                                            a Linear's activation then sits right after its
                                                            matmul and runs as the matmul's epilogue, in the
                                                            matmul's layout (aot_autograd flattens a Linear
                                                            on a 3-d input to view -> addmm -> view)
    permute(x, p) op c -> permute(x op c, p)                exact, for add/sub/mul/div.Scalar when x is (through
                                                            views read by nothing else) an element-wise op's
                                                            result: the scaling joins it (SDPA's q * c after a
                                                            head split becomes a step of the projection's epilogue)
    view(view(x, s1), s2) -> view(x, s2)                    exact; and view(x, shape of x) -> x (x not a graph input)
    permute(view(addmm(b, x, w^T), [B, S, H, D]), [0, 2, 1, 3])
                       -> permute(view(w @ x^T + b[:, None], [H, D, B, S]), [2, 0, 3, 1])
                                                            the same products and sums (exact on the device;
                                                            fp32 rounding apart on the host), for heads D
                                                            that are no whole sticks: the heads are then a
                                                            view of the result sticked along the sequence
    cat([±x[..., a1:b1], ±x[..., a2:b2], ...], -1)
                       -> linear(x, P)                      exact for finite x (each output one product
                                                            by ±1), for x and the cat at most 4 sticks
                                                            wide and a piece ending inside a stick, the
                                                            result read only by matmuls contracting
                                                            along it (a NaN spread along a row shows
                                                            nowhere else) and DL16 numerics (no inf):
                                                            P the signed permutation
                       and likewise for pieces interleaved lane by lane,
                       view(cat([unsqueeze(±x[..., s::k], -1), ...], -1), [..., N]) (GPT-J's rotary)
                       otherwise
                       -> transpose(cat([±t[a1:b1], ±t[a2:b2], ...], p), p, -1),  t = transpose(x, p, -1)
                                                            exact (the same elements moved, the same
                                                            negations), when a piece ends inside a stick
                                                            (a rotary embedding's rotate_half): one swap of
                                                            the stick dim with dim p for the whole cat,
                                                            where the lowering would swap every piece and
                                                            the result apart
    cat([±x[..., a1:b1], ...], -1) * s
                       -> cat([x[..., a1:b1], ...], -1) * (s * S)
                                                            exact, for pieces of whole sticks (rotate_half
                                                            at heads of 128) read only by the product: S
                                                            the lanes' signs; no negation kernel, and the
                                                            pieces are slices the cat's kernel copies
    bmm(m(x * c), m'(y * d)) -> bmm(m(x * (c * d)), m'(y))  <= 1 fp32 ulp apart per element (one
                                                            rounding of a scaling fewer; none when c * d
                                                            is a power of two), m and m' moves and copies
                                                            (views, permutes, expands, clones): SDPA's
                                                            sqrt(scale) on q and on k becomes the scale
                                                            on q, and k (the whole transposed K cache, at
                                                            every step) is not scaled at all
    bmm(A, view(f(view(clone(expand(unsqueeze(kv, 2), [B, G, R, L, D])), [B, G * R, L, D]))))
                       -> view(bmm(view(A, [B * G, R * M, K]), view(f(kv))), [B * G * R, M, N])
                                                            the same products and sums, for GQA's repeat_kv
                                                            (f: a permute of the last two dims, a scaling):
                                                            the R query heads of a group are rows of one
                                                            product with their shared K or V, instead of
                                                            the cache copied R times
    slice(f(a, b), d) -> f(slice(a, d), slice(b, d))         exact, for f element-wise or a reduction along
                                                            other dims, read only by the slice, the slice
                                                            keeping at most half of d: generate's last-position
                                                            logits slice moves before the final norm

The pass runs first in spyre-pipeline; `convert-torch-to-spyre` without it stays correct (it
refuses what it cannot lower exactly, e.g. integer exponents, and the op runs on the CPU).

The package, by family:

    utils        building torch ops, constants, the op names of views and element moves
    forms        pow, max.dim, split, the tanh gelu, 0-d constant operands
    rowwise      softmax over trailing units, one-column products, keepdim, slices of rows
    views        element-wise ops before views, views of views
    attention    heads from a transposed linear, scalings on one operand, grouped query heads
    lane_moves   lane moves as products, in one swap, signs onto a factor
    adapt        the pass and `ADAPTATIONS`
"""

from spyre_mlir.transforms.torch_adapt.adapt import ADAPTATIONS, TorchAdaptPass
from spyre_mlir.transforms.torch_adapt.attention import (
    HEAD_READERS,
    HEAD_VIEWS,
    GroupedHeadsInRows,
    HeadsFromTransposedLinear,
    ScalingsOnOneOperand,
)
from spyre_mlir.transforms.torch_adapt.forms import (
    MaxDimToAmax,
    PowToMultiplications,
    ScalarTensorOperand,
    SliceOfCat,
    SplitIntoSlices,
    TanhGeluForm,
)
from spyre_mlir.transforms.torch_adapt.lane_moves import (
    LANE_PRODUCT_MAX,
    InterleavedLaneMovesAsProduct,
    LaneMovesAsProduct,
    LaneMovesInOneSwap,
    NegationsOntoFactor,
)
from spyre_mlir.transforms.torch_adapt.rowwise import (
    ProductsWithOneColumn,
    ReduceWithoutKeepdim,
    SliceBeforeRowwise,
    SoftmaxOverTrailingUnits,
)
from spyre_mlir.transforms.torch_adapt.utils import ELEMENT_MOVES, LANE_MOVES, VIEWS
from spyre_mlir.transforms.torch_adapt.views import ElementwiseBeforeView, ViewOfView

__all__ = [
    "ADAPTATIONS",
    "ELEMENT_MOVES",
    "ElementwiseBeforeView",
    "GroupedHeadsInRows",
    "HEAD_READERS",
    "HEAD_VIEWS",
    "HeadsFromTransposedLinear",
    "InterleavedLaneMovesAsProduct",
    "LANE_MOVES",
    "LANE_PRODUCT_MAX",
    "LaneMovesAsProduct",
    "LaneMovesInOneSwap",
    "MaxDimToAmax",
    "NegationsOntoFactor",
    "PowToMultiplications",
    "ProductsWithOneColumn",
    "ReduceWithoutKeepdim",
    "ScalarTensorOperand",
    "ScalingsOnOneOperand",
    "SliceBeforeRowwise",
    "SoftmaxOverTrailingUnits",
    "SliceOfCat",
    "SplitIntoSlices",
    "TanhGeluForm",
    "TorchAdaptPass",
    "VIEWS",
    "ViewOfView",
]

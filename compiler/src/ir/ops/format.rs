//! Pretty forms as data (MLIR's declarative `assemblyFormat`).
//!
//! An op's pretty form is a list of directives after its name; the text
//! parser reads the op by following the list and the printer writes it by
//! following the same list, so the two cannot disagree. For example
//! `stablehlo.dynamic_slice %x, %i, %j, sizes = [1, 4] : (...) -> ...` is
//! `[Operands, Punct(","), Keyed("sizes", "slice_sizes"), AttrDict,
//! Sig(Functional)]`.
//!
//! An op whose attributes are not all covered by its directives (an
//! unusual optional attribute, say) is printed in the generic form instead.

/// One piece of a pretty form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// Every operand: `%a, %b`.
    Operands,
    /// A punctuation token, printed and expected as is: `(`, `)`, `,`.
    Punct(&'static str),
    /// `key = value` for the attribute `attr`, its value in the pretty
    /// spelling: `[1, 2]` for integer arrays, `4` for integers, `DEFAULT`
    /// for enums.
    Keyed(&'static str, &'static str),
    /// `key=value`, with no spaces (Shardy's assembly formats:
    /// `allowed_direction=BACKWARD`); read as [`Fmt::Keyed`].
    Assigned(&'static str, &'static str),
    /// A symbol `@name` holding the string attribute `attr`
    /// (`custom_call`'s target).
    Symbol(&'static str),
    /// The optional dictionary `{...}` of other (discardable) attributes,
    /// including `sdy.sharding`.
    AttrDict,
    /// `:` and the signature.
    Sig(SigForm),
    /// `(%iterArg = %operand, ...)`: the operands, each named as the block
    /// argument every region gets for it (`stablehlo.while`).
    IterArgs,
    /// The optional dictionary with its keyword: `attributes {...}`.
    KeywordAttrDict,
    /// A line break in the printed form (nothing to read).
    Newline,
    /// `keyword { ops }`: the next structural region, its block arguments
    /// named by `IterArgs` (typed as the operands) and not written again.
    Region(&'static str),
    /// `key=[<@mesh, [...]>, ...]`: the attribute `attr`, a list of
    /// shardings (`sdy.manual_computation`'s `in_shardings`).
    Shardings(&'static str, &'static str),
    /// `key={"x", "y"}`: the attribute `attr`, a set of mesh axis names.
    AxisNames(&'static str, &'static str),
    /// `{"x", "y":(1)2}`: the attribute `attr`, a list of mesh axes and
    /// sub-axes, with no key (`sdy.all_reduce`'s reduction axes).
    AxisRefs(&'static str),
    /// `key=<@mesh, [...]>`: the attribute `attr`, one sharding
    /// (`sdy.all_reduce`'s `out_sharding`).
    Sharding(&'static str, &'static str),
    /// `<@mesh, [...]>`: the attribute `attr`, one sharding, with no key
    /// (`sdy.sharding_constraint`'s and `sdy.reshard`'s `sharding`); read
    /// also with its `#sdy.sharding` prefix.
    BareSharding(&'static str),
    /// `(%a: t, ...) { ops }`: the next structural region with its block
    /// arguments written before it (`sdy.manual_computation`'s body).
    ArgsRegion,
    /// `key = body`: the attribute `attr`, whose generic spelling is
    /// `dialect<body>`, written with its body bare (a convolution's
    /// `dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`); the op's
    /// codec reads the body.
    Bare(&'static str, &'static str, &'static str),
    /// `key = {entry = value, ...}`: several optional attributes in one
    /// group, each `(entry, attr)` written only when present, values in
    /// the pretty spelling (a convolution's `window = {stride = [1, 1],
    /// pad = [[0, 0], [1, 1]], reverse = [false, false]}`).
    Group(&'static str, &'static [(&'static str, &'static str)]),
    /// The optional dictionary `{...}` holding these inherent attributes
    /// (generic spelling, `1 : i64`) besides the discardable ones, all in
    /// name order as MLIR's `attr-dict` prints them.
    AttrDictWith(&'static [&'static str]),
    /// `key = eXmY`: two integer attributes in one word, the exponent and
    /// the mantissa bit counts of a float format (`reduce_precision`'s
    /// `format = e8m7`).
    ExpMantissa(&'static str, &'static str, &'static str),
    /// A bare keyword, printed and expected as is (`across`).
    Word(&'static str),
    /// `dense<...> : t`: the attribute `attr`, a dense literal
    /// ([`crate::ir::ops::OpDef::literal`]), and its type, which is the type
    /// of the op's one result and the whole signature (`stablehlo.constant`).
    TypedLiteral(&'static str),
    /// `VALUE`: the enum attribute `attr` as its bare value, one of
    /// `names`; `what` says what it is in errors ("a comparison
    /// direction"). `stablehlo.compare`'s `LT`.
    Enum(&'static str, &'static str, &'static [&'static str]),
    /// `, VALUE`: an optional [`Fmt::Enum`], written only when the
    /// attribute is present and read when a `,` comes
    /// (`stablehlo.compare`'s `, FLOAT`).
    OptionalEnum(&'static str, &'static str, &'static [&'static str]),
    /// The operands as `(%x init: %c), (%y init: %d)`: N inputs, then
    /// their N init values (reduce).
    InitPairs,
    /// ` applies stablehlo.add`: the op's one scalar body, when it is a
    /// single binary op of its two block arguments in order; nothing
    /// otherwise (then [`Fmt::ReducerBody`] prints it).
    AppliesBody,
    /// The scalar body after the signature, unless [`Fmt::AppliesBody`]
    /// gave it: `reducer(%a: t, %b: t) (%c: u, %d: u) { ... }`, one
    /// argument pair `(a_k, b_k)` per input for block arguments
    /// `(a_0..a_N, b_0..b_N)`.
    ReducerBody,
    /// `[0:4, 2:8:2]`: the start, limit and stride attributes (integer
    /// lists) of a slice, one `start:limit[:stride]` per dimension, the
    /// stride left out where it is 1. Optional when read: older printings
    /// give the three attributes in the dictionary instead.
    SliceRanges(&'static str, &'static str, &'static str),
    /// `, key = value` entries after the operands, each optional: read in
    /// any order while a `,` follows (a key given twice: the later one
    /// counts), written in this order, each that has something to show
    /// (`dot_general`'s `, batching_dims = [0] x [0], contracting_dims =
    /// [2] x [1], precision = [DEFAULT, DEFAULT]`). The entries are
    /// [`Fmt::DimsPair`], [`Fmt::EnumList`] and [`Fmt::Prefixed`].
    Trailing(&'static [Fmt]),
    /// `key = [0, 1] x [2]`: the integer-list parameters `lhs` and `rhs` of
    /// the attribute `attr`, spelled `dialect<lhs = [0, 1], rhs = [2],
    /// ...>` in the generic form (a parameter left out is empty; so is a
    /// pair the text leaves out of a [`Fmt::Trailing`]). Written even when
    /// both lists are empty where `always`, else left out then.
    DimsPair {
        key: &'static str,
        attr: &'static str,
        dialect: &'static str,
        lhs: &'static str,
        rhs: &'static str,
        always: bool,
    },
    /// `key = [A, B]`: the attribute `attr`, a list of enum values written
    /// bare, each `dialect<keyword A>` in the generic form (`precision =
    /// [DEFAULT, HIGHEST]` for `[#stablehlo<precision DEFAULT>, ...]`);
    /// left out when absent.
    EnumList {
        key: &'static str,
        attr: &'static str,
        dialect: &'static str,
        keyword: &'static str,
    },
    /// `key = <...>`: the discardable attribute `key`, kept verbatim with
    /// the op's other attributes, whose value the pretty form writes
    /// without its dialect `prefix` (`algorithm = <...>` for
    /// `#stablehlo.dot_algorithm<...>`); read as one bracketed group.
    /// Written here when its value starts with `prefix`, else left in the
    /// dictionary.
    Prefixed(&'static str, &'static str),
}

impl Fmt {
    /// Whether this directive reads and writes the attribute `name`.
    pub fn mentions(&self, name: &str) -> bool {
        match *self {
            Fmt::Keyed(_, a)
            | Fmt::Assigned(_, a)
            | Fmt::Shardings(_, a)
            | Fmt::AxisNames(_, a)
            | Fmt::Sharding(_, a)
            | Fmt::AxisRefs(a)
            | Fmt::BareSharding(a)
            | Fmt::Symbol(a)
            | Fmt::Enum(a, ..)
            | Fmt::TypedLiteral(a)
            | Fmt::OptionalEnum(a, ..)
            | Fmt::Bare(_, a, _) => a == name,
            Fmt::Group(_, entries) => entries.iter().any(|&(_, a)| a == name),
            Fmt::AttrDictWith(attrs) => attrs.contains(&name),
            Fmt::ExpMantissa(_, e, m) => e == name || m == name,
            Fmt::SliceRanges(s, l, st) => [s, l, st].contains(&name),
            Fmt::Trailing(entries) => entries.iter().any(|e| e.mentions(name)),
            Fmt::DimsPair { attr, .. } | Fmt::EnumList { attr, .. } => attr == name,
            _ => false,
        }
    }

    /// The key a keyed entry of [`Fmt::Trailing`] starts with.
    pub fn key(&self) -> Option<&'static str> {
        match *self {
            Fmt::DimsPair { key, .. } | Fmt::EnumList { key, .. } | Fmt::Prefixed(key, _) => {
                Some(key)
            }
            _ => None,
        }
    }
}

/// How the types after `:` are written. The parser accepts every form
/// that determines the types; the printer writes the one named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SigForm {
    /// `(t1, t2) -> t3` (or `-> (t3, t4)` for several results).
    Functional,
    /// [`SigForm::Functional`], and only it when read: MLIR's
    /// `functional-type(operands, results)` (`func.call`), where `: t`
    /// says nothing of the results.
    FunctionType,
    /// `t` when every operand and the one result have type `t`, else
    /// functional (MLIR's `SameOperandsAndResultType`).
    SameType,
    /// `t1, t2`: the operand types, which are also the result types
    /// (nothing at all, `:` included, when there are no operands).
    TypeList,
    /// `t1 -> t2` / `t1 -> (t2, t3)` for one operand (CHLO's ops).
    BareFunctional,
    /// `tp, t`: a predicate's type, then the type of the other operands
    /// and the one result (`stablehlo.select`); functional otherwise.
    PredicateAndValue,
    /// `t`: the type of the one result (of the operand, for an op
    /// without results), which the operand shares (Shardy's
    /// `type($result)`); read as [`SigForm::SameType`].
    ResultType,
    /// `t1, t2`: the operand types of an op without results
    /// (`sdy.sharding_group`); read also as a function type.
    OperandTypes,
    /// `t1, t2`: the result types of an op without operands
    /// (`stablehlo.partition_id : tensor<ui32>`).
    Results,
}

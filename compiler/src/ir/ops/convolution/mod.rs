//! `stablehlo.convolution`: dot products between windows of `lhs` (the
//! input: batch, feature and spatial dimensions) and `rhs` (the kernel:
//! input feature, output feature and spatial dimensions). The window is
//! the kernel's spatial extent, moved by `window_strides` over the input
//! dilated by `lhs_dilation` and padded by `padding` (negative padding
//! removes elements); `rhs_dilation` spreads the kernel's taps and
//! `window_reversal` flips it. `feature_group_count` splits the input
//! features (depthwise convolutions), `batch_group_count` the input batch
//! (JAX's weight gradients), each group convolved with its slice of the
//! kernel's output features.
//!
//! JAX prints the pretty form
//! `stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
//! window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1],
//! rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64,
//! feature_group_count = 1 : i64, precision_config = [...]} : (...) -> ...`;
//! the generic form writes the dimension numbers as
//! `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>` (or
//! `#stablehlo.conv<raw input_batch_dimension = 0, ...>`) and the window as
//! `window_strides`, `padding`, `lhs_dilation`, `rhs_dilation`,
//! `window_reversal`.

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::checks::check_static_shape;
use crate::ir::ops::decode::I64Rows;
use crate::ir::ops::window::Window;
use crate::ir::ops::SigForm;
use crate::ir::ops::{
    Arity, AttrCodec, DecodeError, DecodeOp, Decoder, Fmt, OpDef, OpSpec, RuleShapes,
};
use crate::ir::types::TensorType;

pub mod dims;

use crate::rules::builder::RuleBuilder;
use crate::rules::rule::{FactorKind, OpShardingRule, RuleOptions};
pub use dims::{ConvDims, CONV_ATTR};

crate::attr_enum! {
    /// How precisely the backend multiplies (meshrun computes every
    /// precision alike: in the element type, f16/bf16 through f32).
    pub enum Precision = "#stablehlo" "precision" {
        Default => "DEFAULT",
        High => "HIGH",
        Highest => "HIGHEST",
    }
}

/// `precision_config = [#stablehlo<precision DEFAULT>, ...]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrecisionConfig(pub Vec<Precision>);

impl AttrCodec for PrecisionConfig {
    fn decode(a: &Attr) -> Result<Self, String> {
        match a {
            Attr::List(items) => items
                .iter()
                .map(Precision::decode)
                .collect::<Result<_, _>>()
                .map(PrecisionConfig),
            _ => Err(format!(
                "expected a list of #stablehlo<precision ...>, found {}",
                a.kind_name()
            )),
        }
    }

    fn encode(&self) -> Option<Attr> {
        Some(Attr::List(
            self.0.iter().filter_map(|p| p.encode()).collect(),
        ))
    }
}

define_attrs! {
    /// The attributes in the order the generic form prints them
    /// (alphabetical); absent window lists mean 1 (no reversal) in every
    /// spatial dimension, absent padding 0.
    pub struct ConvolutionAttrs {
        batch_group_count: i64 = "batch_group_count" default 1,
        dimension_numbers: ConvDims = "dimension_numbers",
        feature_group_count: i64 = "feature_group_count" default 1,
        lhs_dilation: Option<Vec<i64>> = "lhs_dilation",
        padding: Option<I64Rows> = "padding",
        precision_config: Option<PrecisionConfig> = "precision_config",
        rhs_dilation: Option<Vec<i64>> = "rhs_dilation",
        window_reversal: Option<Vec<bool>> = "window_reversal",
        window_strides: Option<Vec<i64>> = "window_strides",
    }
}

/// The op: its attributes behind a box (they are many, and `OpKind`
/// stays small).
#[derive(Debug, Clone, PartialEq)]
pub struct Convolution(pub Box<ConvolutionAttrs>);

impl std::ops::Deref for Convolution {
    type Target = ConvolutionAttrs;

    fn deref(&self) -> &ConvolutionAttrs {
        &self.0
    }
}

impl std::ops::DerefMut for Convolution {
    fn deref_mut(&mut self) -> &mut ConvolutionAttrs {
        &mut self.0
    }
}

/// The pretty form's `window = {...}` entries and their attributes.
const WINDOW_ENTRIES: &[(&str, &str)] = &[
    ("stride", "window_strides"),
    ("pad", "padding"),
    ("lhs_dilate", "lhs_dilation"),
    ("rhs_dilate", "rhs_dilation"),
    ("reverse", "window_reversal"),
];

impl DecodeOp for Convolution {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::Exactly(2),
        pretty: Some(&[
            Fmt::Punct("("),
            Fmt::Operands,
            Fmt::Punct(")"),
            Fmt::Bare("dim_numbers", "dimension_numbers", CONV_ATTR),
            Fmt::Punct(","),
            Fmt::Group("window", WINDOW_ENTRIES),
            Fmt::AttrDictWith(&[
                "batch_group_count",
                "feature_group_count",
                "precision_config",
            ]),
            Fmt::Sig(SigForm::Functional),
        ]),
        ..OpSpec::new("stablehlo.convolution")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        ConvolutionAttrs::decode_attrs(d).map(|a| Convolution(Box::new(a)))
    }
}

/// One spatial dimension's list attribute (strides, dilations), `default`
/// in every dimension when absent, checked against the spatial rank.
fn spatial_list(v: Option<&[i64]>, name: &str, n: usize, default: i64) -> Result<Vec<i64>, String> {
    let v = v.map_or_else(|| vec![default; n], <[i64]>::to_vec);
    if v.len() != n {
        return Err(format!(
            "{name} has {} entries but there are {n} spatial dimensions",
            v.len()
        ));
    }
    Ok(v)
}

impl ConvolutionAttrs {
    /// The number of spatial dimensions (rank - 2).
    pub fn spatial_rank(&self) -> usize {
        self.dimension_numbers.input_spatial.len()
    }

    /// The window over the lhs's spatial dimensions (in the order of
    /// `input_spatial_dimensions`) for a kernel of `rhs_shape`: its size
    /// is the kernel's spatial extent, its base dilation `lhs_dilation`,
    /// its window dilation `rhs_dilation`; or why the attributes do not
    /// fit (spec C2-C8).
    pub fn window(&self, rhs_shape: &[i64]) -> Result<Window, String> {
        let n = self.spatial_rank();
        let strides = spatial_list(self.window_strides.as_deref(), "window_strides", n, 1)?;
        let lhs_dil = spatial_list(self.lhs_dilation.as_deref(), "lhs_dilation", n, 1)?;
        let rhs_dil = spatial_list(self.rhs_dilation.as_deref(), "rhs_dilation", n, 1)?;
        for (name, list) in [
            ("window_strides", &strides),
            ("lhs_dilation", &lhs_dil),
            ("rhs_dilation", &rhs_dil),
        ] {
            if let Some(bad) = list.iter().find(|&&x| x <= 0) {
                return Err(format!("{name} must be positive, got {bad}"));
            }
        }
        let padding = match &self.padding {
            None => vec![(0, 0); n],
            Some(p) => {
                if p.rows.len() != n || (n > 0 && p.width != 2) {
                    return Err(format!(
                        "padding must have shape [{n}, 2], got [{}, {}]",
                        p.rows.len(),
                        p.width
                    ));
                }
                p.rows.iter().map(|r| (r[0], r[1])).collect()
            }
        };
        if let Some(rev) = &self.window_reversal {
            if rev.len() != n {
                return Err(format!(
                    "window_reversal has {} entries but there are {n} spatial dimensions",
                    rev.len()
                ));
            }
        }
        let dims = self
            .dimension_numbers
            .kernel_spatial
            .iter()
            .map(|&d| rhs_shape.get(d).copied().unwrap_or(0))
            .collect();
        Ok(Window {
            dims,
            strides,
            base_dilations: lhs_dil,
            window_dilations: rhs_dil,
            padding,
        })
    }

    /// Whether the kernel is flipped along spatial dimension `s`.
    pub fn reversed(&self, s: usize) -> bool {
        self.window_reversal
            .as_ref()
            .is_some_and(|r| r.get(s).copied().unwrap_or(false))
    }

    /// How many groups the op computes: `feature_group_count` or
    /// `batch_group_count` (at most one of them is above 1).
    pub fn groups(&self) -> i64 {
        self.feature_group_count.max(self.batch_group_count)
    }
}

impl Convolution {
    /// The same op with other group counts (a device's block holds fewer
    /// groups).
    pub fn with_groups(&self, feature_group_count: i64, batch_group_count: i64) -> Convolution {
        Convolution(Box::new(ConvolutionAttrs {
            feature_group_count,
            batch_group_count,
            ..(*self.0).clone()
        }))
    }
}

impl ConvolutionAttrs {
    /// Spec C10-C24 on operands of these types.
    fn check_operands(&self, lhs: &TensorType, rhs: &TensorType) -> Result<Window, String> {
        check_static_shape(lhs, "lhs")?;
        check_static_shape(rhs, "rhs")?;
        let n = lhs.rank();
        if rhs.rank() != n {
            return Err(format!("lhs {lhs} and rhs {rhs} must have the same rank"));
        }
        if n < 2 {
            return Err(format!("lhs {lhs} must have rank at least 2"));
        }
        if lhs.elem != rhs.elem {
            return Err(format!(
                "lhs has element type {} but rhs has {}",
                lhs.elem, rhs.elem
            ));
        }
        let dims = &self.dimension_numbers;
        dims.check_rank(n)?;
        let (fg, bg) = (self.feature_group_count, self.batch_group_count);
        if fg <= 0 {
            return Err(format!("feature_group_count must be positive, got {fg}"));
        }
        if bg <= 0 {
            return Err(format!("batch_group_count must be positive, got {bg}"));
        }
        if fg > 1 && bg > 1 {
            return Err(format!(
                "feature_group_count ({fg}) and batch_group_count ({bg}) cannot both be above 1"
            ));
        }
        let batch = lhs.shape[dims.input_batch];
        let feature = lhs.shape[dims.input_feature];
        let k_in = rhs.shape[dims.kernel_input_feature];
        let k_out = rhs.shape[dims.kernel_output_feature];
        if batch % bg != 0 {
            return Err(format!(
                "the input batch size {batch} (lhs dimension {}) is not a multiple of batch_group_count {bg}",
                dims.input_batch
            ));
        }
        if feature % fg != 0 {
            return Err(format!(
                "the input feature size {feature} (lhs dimension {}) is not a multiple of feature_group_count {fg}",
                dims.input_feature
            ));
        }
        if k_in * fg != feature {
            return Err(format!(
                "the kernel input feature size {k_in} (rhs dimension {}) must be the input feature size {feature} / feature_group_count {fg}",
                dims.kernel_input_feature
            ));
        }
        for (what, g) in [("batch_group_count", bg), ("feature_group_count", fg)] {
            if k_out % g != 0 {
                return Err(format!(
                    "the kernel output feature size {k_out} (rhs dimension {}) is not a multiple of {what} {g}",
                    dims.kernel_output_feature
                ));
            }
        }
        if let Some(p) = &self.precision_config {
            if !p.0.is_empty() && p.0.len() != 2 {
                return Err(format!(
                    "precision_config must have 2 entries, got {}",
                    p.0.len()
                ));
            }
        }
        self.window(&rhs.shape)
    }

    /// The result shape (spec C25).
    pub fn result_shape(
        &self,
        lhs: &[i64],
        rhs: &[i64],
        window: &Window,
    ) -> Result<Vec<i64>, String> {
        let dims = &self.dimension_numbers;
        let spatial: Vec<i64> = dims.input_spatial.iter().map(|&d| lhs[d]).collect();
        let windows = window.num_windows(&spatial)?;
        let mut out = vec![0; lhs.len()];
        out[dims.output_batch] = lhs[dims.input_batch] / self.batch_group_count;
        out[dims.output_feature] = rhs[dims.kernel_output_feature];
        for (&d, w) in dims.output_spatial.iter().zip(windows) {
            out[d] = w;
        }
        Ok(out)
    }
}

impl OpDef for Convolution {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        let [lhs, rhs] = operands else {
            return Err("expects an lhs and an rhs".into());
        };
        let window = self.check_operands(lhs, rhs)?;
        let shape = self.result_shape(&lhs.shape, &rhs.shape, &window)?;
        Ok(vec![lhs.with_shape(shape)])
    }

    /// Shardy's rule (`op_sharding_rule_registry.cc`, `ConvolutionOp`):
    /// the batch-group factor, the per-group batch, two factors per
    /// spatial dimension (the number of windows: permutation; the window
    /// size: reduction; the larger one major, each capped by what is left
    /// of the input dimension and left out at size 1; none under
    /// conservative propagation), the feature-group factor, the per-group
    /// input feature (reduction) and the per-group output feature (left
    /// out at size 1).
    fn rule(
        &self,
        shapes: &RuleShapes,
        options: RuleOptions,
    ) -> Result<Option<OpShardingRule>, String> {
        let (lhs, rhs, out) = (shapes.operands[0], shapes.operands[1], shapes.results[0]);
        let dims = &self.dimension_numbers;
        let mut b = RuleBuilder::for_shapes(shapes.operands, shapes.results);
        let pass = FactorKind::PassThrough;
        if self.batch_group_count > 1 {
            b.add_factor_per_tensor(
                self.batch_group_count,
                pass,
                &[Some(dims.input_batch), Some(dims.kernel_output_feature)],
                &[Some(dims.output_feature)],
            );
        }
        b.add_factor_per_tensor(
            out[dims.output_batch],
            pass,
            &[Some(dims.input_batch), None],
            &[Some(dims.output_batch)],
        );
        if !options.conservative {
            for s in 0..self.spatial_rank() {
                let (ld, rd, od) = (
                    dims.input_spatial[s],
                    dims.kernel_spatial[s],
                    dims.output_spatial[s],
                );
                let windows = out[od];
                let size = rhs[rd];
                let mut remaining = lhs[ld];
                let mut add = |b: &mut RuleBuilder, factor: i64, contracting: bool| {
                    let factor = remaining.min(factor);
                    if factor > 1 {
                        if contracting {
                            b.add_factor_per_tensor(
                                factor,
                                FactorKind::Reduction,
                                &[Some(ld), Some(rd)],
                                &[None],
                            );
                        } else {
                            b.add_factor_per_tensor(
                                factor,
                                FactorKind::Permutation,
                                &[Some(ld), None],
                                &[Some(od)],
                            );
                        }
                        remaining /= factor;
                    }
                };
                if windows >= size {
                    add(&mut b, windows, false);
                    add(&mut b, size, true);
                } else {
                    add(&mut b, size, true);
                    add(&mut b, windows, false);
                }
            }
        }
        if self.feature_group_count > 1 {
            b.add_factor_per_tensor(
                self.feature_group_count,
                pass,
                &[Some(dims.input_feature), Some(dims.kernel_output_feature)],
                &[Some(dims.output_feature)],
            );
        }
        b.add_factor_per_tensor(
            rhs[dims.kernel_input_feature],
            FactorKind::Reduction,
            &[Some(dims.input_feature), Some(dims.kernel_input_feature)],
            &[None],
        );
        let per_group_out = out[dims.output_feature] / self.groups().max(1);
        if per_group_out > 1 {
            b.add_factor_per_tensor(
                per_group_out,
                pass,
                &[None, Some(dims.kernel_output_feature)],
                &[Some(dims.output_feature)],
            );
        }
        b.build().map(Some).map_err(|e| e.to_string())
    }
}

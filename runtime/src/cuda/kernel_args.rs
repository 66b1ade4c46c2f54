//! One launch of a kernel as data: the kernel, the launch dimensions and
//! its argument list ([`KArg`]: buffers with the elements the kernel
//! touches, tables, scalars). Every launcher of `kernels.rs` builds a
//! [`Plan`] (in [`super::kernel_plans`]) and one runner checks and pushes
//! it, so the checks happen in one place:
//!
//! - every buffer holds the elements the kernel reads or writes
//!   ([`Plan::check_buffers`]; the kernels trust their arguments);
//! - the arguments are, in order and kind, the parameters the generator
//!   wrote for the kernel (`meshrun_kernels::cuda::params`, read back
//!   from the kernel's source), and each buffer's element type is the
//!   parameter's ([`check_signature`]).
//!
//! Pure and generic over the buffer type ([`Buffer`]), so the plans of
//! every launcher are checked against the generated sources without a
//! GPU (the tests below).

use std::borrow::Cow;

use meshrun_compiler::ir::ElemType;
use meshrun_kernels::cuda::names::{cuda_type, width_type, WIDTHS};
use meshrun_kernels::cuda::params::Param;
use meshrun_kernels::cuda::KernelModule;

use super::launch::LaunchDims;

/// What the checks need of a device buffer.
pub trait Buffer {
    /// Elements held.
    fn elements(&self) -> usize;
    fn elem(&self) -> ElemType;
}

/// One argument of a kernel launch.
pub enum KArg<'a, B> {
    /// A buffer the kernel reads: it must hold this many elements (`what`
    /// names it in the error).
    In(&'a B, usize, Cow<'static, str>),
    /// A buffer the kernel writes (and may read).
    Out(&'a mut B, usize, Cow<'static, str>),
    /// A buffer the kernel reads as words of its parameter's width,
    /// whatever its element type; the plan checked its bytes.
    InWords(&'a B),
    /// A buffer the kernel writes as words of its parameter's width.
    OutWords(&'a mut B),
    /// A table of `long long` copied to the device for the launch.
    Table(Cow<'a, [i64]>),
    /// The device addresses of blocks (`(buffer, first element)`) of which
    /// the kernel reads this many elements each, as a table of `unsigned
    /// long long`.
    Blocks(Vec<(&'a B, usize)>, usize),
    /// `long long`.
    I64(i64),
    /// `unsigned long long`.
    U64(u64),
    /// `int`.
    I32(i32),
}

impl<B> KArg<'_, B> {
    /// A short description, for signature errors.
    fn kind(&self) -> &'static str {
        match self {
            KArg::In(..) => "input buffer",
            KArg::Out(..) => "output buffer",
            KArg::InWords(..) => "input words",
            KArg::OutWords(..) => "output words",
            KArg::Table(..) => "long long table",
            KArg::Blocks(..) => "block address table",
            KArg::I64(..) => "long long",
            KArg::U64(..) => "unsigned long long",
            KArg::I32(..) => "int",
        }
    }
}

/// An input buffer of which the kernel reads `n` elements.
pub fn input<'a, B>(b: &'a B, n: usize, what: impl Into<Cow<'static, str>>) -> KArg<'a, B> {
    KArg::In(b, n, what.into())
}

/// An output buffer of which the kernel writes `n` elements.
pub fn output<'a, B>(b: &'a mut B, n: usize, what: impl Into<Cow<'static, str>>) -> KArg<'a, B> {
    KArg::Out(b, n, what.into())
}

/// The kernel of a launch.
pub enum KernelRef<'a> {
    /// One of the kernels of `meshrun_kernels::cuda::modules`.
    Named(Cow<'a, str>),
    /// Function `.1` of a module generated for a program.
    Generated(&'a KernelModule, &'static str),
}

impl KernelRef<'_> {
    pub fn name(&self) -> &str {
        match self {
            KernelRef::Named(n) => n,
            KernelRef::Generated(_, f) => f,
        }
    }
}

/// One launch: its arguments and, unless there is nothing to launch (the
/// buffers are still checked), the kernel and grid.
pub struct Plan<'a, B> {
    pub args: Vec<KArg<'a, B>>,
    pub launch: Option<(KernelRef<'a>, LaunchDims)>,
}

/// What a launcher asks for: nothing at all (`None`: nothing to launch,
/// nothing to check), or a [`Plan`].
pub type Planned<'a, B> = Result<Option<Plan<'a, B>>, String>;

/// A launch of the kernel `name` over `dims`.
pub fn named<'a, B>(
    name: impl Into<Cow<'a, str>>,
    dims: LaunchDims,
    args: Vec<KArg<'a, B>>,
) -> Planned<'a, B> {
    Ok(Some(Plan {
        args,
        launch: Some((KernelRef::Named(name.into()), dims)),
    }))
}

/// Only the checks of `args`: nothing to launch.
pub fn checks_only<B>(args: Vec<KArg<'_, B>>) -> Planned<'_, B> {
    Ok(Some(Plan { args, launch: None }))
}

/// `d` holds at least `n` elements.
pub fn need<B: Buffer + ?Sized>(d: &B, n: usize, what: &str) -> Result<(), String> {
    if d.elements() >= n {
        Ok(())
    } else {
        Err(format!(
            "{what} holds {} elements; the kernel reads or writes {n}",
            d.elements()
        ))
    }
}

impl<B: Buffer> Plan<'_, B> {
    /// Every buffer holds the elements the kernel touches, in argument
    /// order.
    pub fn check_buffers(&self) -> Result<(), String> {
        for a in &self.args {
            match a {
                KArg::In(b, n, what) => need(*b, *n, what)?,
                KArg::Out(b, n, what) => need(&**b, *n, what)?,
                KArg::Blocks(blocks, n) => {
                    for (k, (src, offset)) in blocks.iter().enumerate() {
                        need(*src, offset + n, &format!("block {k}"))?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Whether a buffer of `e` may be passed as a `ty*` parameter: `ty` is
/// its CUDA type, or the unsigned type of its width (the width-generic
/// kernels).
fn elem_fits(ty: &str, e: ElemType) -> bool {
    cuda_type(e) == Some(ty) || width_type(e.byte_size()) == Some(ty)
}

fn is_word(ty: &str) -> bool {
    WIDTHS.iter().any(|&w| width_type(w) == Some(ty))
}

/// The arguments `args` are, in order, of the kinds and element types of
/// the parameters `params` of `kernel`.
pub fn check_signature<B: Buffer>(
    kernel: &str,
    params: &[Param],
    args: &[KArg<'_, B>],
) -> Result<(), String> {
    let bad = |i: usize, why: String| {
        Err(format!(
            "the launcher of {kernel} passes {why} as argument {i} ({} arguments for {} parameters)",
            args.len(),
            params.len()
        ))
    };
    if params.len() != args.len() {
        return bad(args.len().min(params.len()), "a different count".into());
    }
    for (i, (a, p)) in args.iter().zip(params).enumerate() {
        let scalar = |ty: &str| !p.pointer && p.ty == ty;
        let fits = match a {
            KArg::In(b, ..) => p.pointer && p.constant && elem_fits(&p.ty, b.elem()),
            KArg::Out(b, ..) => p.pointer && !p.constant && elem_fits(&p.ty, b.elem()),
            KArg::InWords(_) => p.pointer && p.constant && is_word(&p.ty),
            KArg::OutWords(_) => p.pointer && !p.constant && is_word(&p.ty),
            KArg::Table(_) => p.pointer && p.constant && p.ty == "long long",
            KArg::Blocks(..) => p.pointer && p.constant && p.ty == "unsigned long long",
            KArg::I64(_) => scalar("long long"),
            KArg::U64(_) => scalar("unsigned long long"),
            KArg::I32(_) => scalar("int"),
        };
        if !fits {
            let elem = match a {
                KArg::In(b, ..) => format!(" of {}", b.elem()),
                KArg::Out(b, ..) => format!(" of {}", b.elem()),
                _ => String::new(),
            };
            let (c, star) = match (p.constant, p.pointer) {
                (true, true) => ("const ", "*"),
                (false, true) => ("", "*"),
                _ => ("", ""),
            };
            return bad(
                i,
                format!("a {}{elem} for `{c}{}{star} {}`", a.kind(), p.ty, p.name),
            );
        }
    }
    Ok(())
}

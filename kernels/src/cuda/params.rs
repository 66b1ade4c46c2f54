//! The parameter lists of the generated kernels, read back from their
//! source: what the runtime's launchers check their arguments against
//! (at every launch, and in a test without a GPU), so a launcher cannot
//! pass arguments in another order or of another kind than the generator
//! wrote.

use super::KernelModule;

/// One parameter of an `extern "C" __global__` function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The type without `const` and `*` (`float`, `long long`, `pred_t`).
    pub ty: String,
    pub name: String,
    /// A pointer (a device buffer or table) rather than a scalar.
    pub pointer: bool,
    /// A pointer to `const` (read-only).
    pub constant: bool,
}

impl Param {
    /// `const float* x`, `long long n`, ... (one parameter as written).
    pub fn parse(text: &str) -> Option<Param> {
        let text = text.trim();
        let split = text.rfind(|c: char| c == '*' || c.is_whitespace())?;
        let (ty, name) = (text[..=split].trim(), text[split + 1..].trim());
        let pointer = ty.ends_with('*');
        let ty = ty.trim_end_matches('*').trim();
        let (constant, ty) = match ty.strip_prefix("const ") {
            Some(rest) => (true, rest.trim()),
            None => (false, ty),
        };
        if name.is_empty() || ty.is_empty() || ty.contains('*') {
            return None;
        }
        Some(Param {
            ty: ty.to_string(),
            name: name.to_string(),
            pointer,
            constant,
        })
    }
}

/// The parameters of `function` as `source` defines it (`None`: not
/// defined there, or a parameter that does not parse).
pub fn parameters(source: &str, function: &str) -> Option<Vec<Param>> {
    let decl = format!("extern \"C\" __global__ void {function}(");
    let start = source.find(&decl)? + decl.len();
    let len = source[start..].find(')')?;
    let list = &source[start..start + len];
    if list.trim().is_empty() {
        return Some(Vec::new());
    }
    list.split(',').map(Param::parse).collect()
}

impl KernelModule {
    /// The parameters of each of the module's functions, in the order of
    /// [`KernelModule::functions`].
    pub fn parameters(&self) -> Result<Vec<(String, Vec<Param>)>, String> {
        self.functions
            .iter()
            .map(|f| {
                parameters(&self.source, f)
                    .map(|p| (f.clone(), p))
                    .ok_or_else(|| format!("no parameter list of {f} in module {}", self.name))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::modules;

    #[test]
    fn parameters_read_back_from_the_generated_source() {
        let p = |s: &str| Param::parse(s).unwrap();
        assert_eq!(
            p("const long long* meta"),
            Param {
                ty: "long long".into(),
                name: "meta".into(),
                pointer: true,
                constant: true
            }
        );
        assert_eq!(p("unsigned long long bits").ty, "unsigned long long");
        assert!(!p("unsigned long long bits").pointer);
        assert!(p("pred_t* y").pointer && !p("pred_t* y").constant);
        for m in modules() {
            for (f, params) in m.parameters().unwrap() {
                assert!(!params.is_empty(), "{f}");
            }
        }
        let clamp = parameters(&modules()[1].source, "clamp_f32").unwrap();
        let names: Vec<&str> = clamp.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["lo", "lo_all", "x", "hi", "hi_all", "y", "n"]);
    }
}

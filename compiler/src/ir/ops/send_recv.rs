//! `stablehlo.send` / `stablehlo.recv`: host transfers (and, in XLA,
//! cross-program channels) ordered by tokens, as JAX's host callbacks
//! lower them:
//!
//! ```text
//! %1 = "stablehlo.send"(%x, %0) {channel_handle = #stablehlo.channel_handle<handle = 1,
//!   type = 2>, is_host_transfer = true} : (tensor<8x8xf32>, !stablehlo.token) -> !stablehlo.token
//! %2:2 = "stablehlo.recv"(%1) {channel_handle = ..., is_host_transfer = true}
//!   : (!stablehlo.token) -> (tensor<2x2xi32>, !stablehlo.token)
//! ```
//!
//! meshrun carries them like an opaque custom call: no sharding rule
//! (propagation does not pass through them; the partitioner gives them
//! whole values, `custom_call::replicating_rule`), and `run` refuses
//! their tokens (`ir::ops::runnable`).

use crate::define_attrs;
use crate::ir::attr::Attr;
use crate::ir::ops::collectives::ChannelHandle;
use crate::ir::ops::{Arity, DecodeError, DecodeOp, Decoder, OpDef, OpSpec, RuleShapes};
use crate::ir::types::TensorType;
use crate::rules::rule::{OpShardingRule, RuleOptions};

define_attrs! {
    /// `stablehlo.send`
    pub struct Send {
        channel_handle: Option<ChannelHandle> = "channel_handle" default None,
        is_host_transfer: bool = "is_host_transfer" default false,
    }
}

define_attrs! {
    /// `stablehlo.recv`
    pub struct Recv {
        channel_handle: Option<ChannelHandle> = "channel_handle" default None,
        is_host_transfer: bool = "is_host_transfer" default false,
    }
}

impl DecodeOp for Send {
    const SPEC: OpSpec = OpSpec {
        operands: Arity::AtLeast(1),
        ..OpSpec::new("stablehlo.send")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Send::decode_attrs(d)
    }
}

impl OpDef for Send {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    /// The values sent, then a token; the result is a token.
    fn infer(&self, operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        match operands.split_last() {
            Some((t, values)) if t.is_token() && !values.iter().any(|v| v.is_token()) => {
                Ok(vec![TensorType::token()])
            }
            _ => Err("takes the values to send, then one !stablehlo.token".into()),
        }
    }

    fn rule(&self, _s: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}

impl DecodeOp for Recv {
    const SPEC: OpSpec = OpSpec {
        results: Arity::AtLeast(1),
        ..OpSpec::new("stablehlo.recv")
    };

    fn decode(d: &mut Decoder) -> Result<Self, DecodeError> {
        Recv::decode_attrs(d)
    }
}

impl OpDef for Recv {
    fn attrs(&self) -> Vec<(&'static str, Attr)> {
        self.encode_attrs()
    }

    fn infer(&self, _operands: &[TensorType]) -> Result<Vec<TensorType>, String> {
        Err("the result types of stablehlo.recv are the program's".into())
    }

    fn inferable(&self) -> bool {
        false
    }

    /// A token in; the values received, then a token, out.
    fn check(&self, operands: &[TensorType], results: &[TensorType]) -> Result<(), String> {
        let token_in = matches!(operands, [t] if t.is_token());
        let token_out = matches!(results.split_last(), Some((t, values))
            if t.is_token() && !values.iter().any(|v| v.is_token()));
        if token_in && token_out {
            Ok(())
        } else {
            Err("takes one !stablehlo.token and gives the values received, then a token".into())
        }
    }

    fn rule(&self, _s: &RuleShapes, _o: RuleOptions) -> Result<Option<OpShardingRule>, String> {
        Ok(None)
    }
}

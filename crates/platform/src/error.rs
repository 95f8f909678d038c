//! What can go wrong running a platform command.

use safesh_utils::Interrupt;

/// A platform command's failure.
#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    /// An argument is missing, unknown or does not fit the input schema: a
    /// refusal naming the field, before anything runs.
    #[error("{command}: {message}")]
    Usage {
        /// The command.
        command: String,
        /// The field (`repo`), if one is to blame.
        field: Option<String>,
        /// What is wrong, with the field's description.
        message: String,
    },
    /// A credential variable is not set.
    #[error("{command}: the token variable {var} is not set ({platform} needs it)")]
    MissingCredential {
        /// The command.
        command: String,
        /// The platform (`github`).
        platform: String,
        /// The variable.
        var: String,
    },
    /// The host refused something (a path, the network, an approval): the
    /// interpreter's refusal, passed through.
    #[error("{0}")]
    Interrupt(#[from] Interrupt),
    /// The command ran and failed (a remote error, a missing file): exit 1
    /// with this message on stderr.
    #[error("{0}")]
    Failed(String),
}

impl PlatformError {
    /// A usage error about `field`.
    pub fn field(command: &str, field: &str, message: impl Into<String>) -> PlatformError {
        PlatformError::Usage {
            command: command.to_string(),
            field: Some(field.to_string()),
            message: message.into(),
        }
    }
}

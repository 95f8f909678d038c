//! Why a transfer failed.

use safesh_utils::Interrupt;

/// A failed transfer.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The host refused (egress) or the script was stopped: propagate.
    #[error("{0}")]
    Interrupt(Interrupt),
    /// A failure with curl's exit code and message.
    #[error("{1}")]
    Failed(i32, String),
    /// The script was cancelled while waiting on the network.
    #[error("cancelled")]
    Cancelled,
    /// Writing the output failed (curl 23).
    #[error("Failure writing output to destination")]
    Write(std::io::Error),
}

impl NetError {
    /// curl's exit code for this failure (interrupts have none).
    pub fn curl_code(&self) -> i32 {
        match self {
            NetError::Interrupt(_) => 0,
            NetError::Cancelled => 130,
            NetError::Failed(c, _) => *c,
            NetError::Write(_) => 23,
        }
    }
}

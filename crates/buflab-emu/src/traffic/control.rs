//! The traffic generator's control channel in a live run (`buflab serve --emulate`): long-lived
//! flows opened and closed while the run goes on, as the simulator's `[[change]]` entries
//! add and close them.
//!
//! Read first: [`crate::control`] (the channel: one command per line, one JSON line back, the
//! datapath's protocol) and [`super::senders`]. The datapath must know a flow's address and
//! RTT before its first frame, so a live run's plan declares spare flow slots
//! (`Plan::spare`), each with its address and its access link in the datapath, idle until
//! opened; a slot is used once (a closed flow is not reopened: the simulator's added flows
//! take new ids too). Commands, on the sender machine that runs the long-lived flows:
//! - `flows`: the long-lived flows open or due to start, `{"open": [[flow, entry], …],
//!   "spare_left": n}`;
//! - `open`: the next spare slot's sender connects now, `{"flow": f, "traffic": entry,
//!   "at_ps": t}` (t from the run's time 0);
//! - `close FLOW`: that sender closes its connection now (Linux still delivers what was
//!   written; a flow not started yet never starts), `{"flow": f, "at_ps": t}`.
//!
//! An error is `{"error": "…"}`, one line naming the command.

/// The reactor's kind for the control channel's sockets.
pub const KIND: u8 = 12;

/// A command read from a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Flows,
    Open,
    Close(u32),
}

/// Parses one line; an error is the message to send back.
pub fn parse(line: &str) -> Result<Command, String> {
    let mut words = line.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("flows"), None, _) => Ok(Command::Flows),
        (Some("open"), None, _) => Ok(Command::Open),
        (Some("close"), Some(flow), None) => {
            flow.parse().map(Command::Close).map_err(|_| format!("close {flow}: expected a flow number"))
        }
        _ => Err(format!("unknown command {line:?}: expected flows, open or close FLOW")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_and_others_get_one_line_back() {
        assert_eq!(parse("flows"), Ok(Command::Flows));
        assert_eq!(parse("open"), Ok(Command::Open));
        assert_eq!(parse("close 12"), Ok(Command::Close(12)));
        assert!(parse("close twelve").unwrap_err().contains("close twelve: expected a flow number"));
        assert!(parse("close").unwrap_err().contains("expected flows, open or close FLOW"));
        assert!(parse("open 3").is_err());
    }
}

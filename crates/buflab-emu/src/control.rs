//! Control channels: a Unix stream socket on which a client sends one command per line and
//! reads one JSON line back. The datapath has one (its commands below), and so has the traffic
//! generator in a live run (`traffic::control`); both take their lines through [`Control`].
//!
//! Read first: nothing. The datapath's commands: `counts` (the bottleneck's counts now),
//! `buffer LIMIT` (a new hard limit, such as `50pkt` or `30000B`, in force from now: the live
//! auto-sizer's knob), `mark` (the measured window starts now, as SIGUSR1), `epoch PS` (time 0
//! of the run is PS on the monotonic clock, in picoseconds: when the traffic started; every
//! time the datapath reports is from then, and its log is read from then). Everything is
//! non-blocking: the datapath's busy loop polls the channel now and then, the generator's
//! epoll loop when a client's socket is readable ([`Control::fd`], and the clients
//! [`Control::poll`] returns), and neither ever waits on a client.

use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

/// A command read from a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Counts,
    Buffer(String),
    Mark,
    /// Time 0 of the run, on the monotonic clock, ps.
    Epoch(u64),
}

/// Parses one line; an error is the reply to send back.
pub fn parse(line: &str) -> Result<Command, String> {
    let mut words = line.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some("counts"), None, _) => Ok(Command::Counts),
        (Some("mark"), None, _) => Ok(Command::Mark),
        (Some("buffer"), Some(limit), None) => Ok(Command::Buffer(limit.to_string())),
        (Some("epoch"), Some(ps), None) => {
            ps.parse().map(Command::Epoch).map_err(|_| format!("epoch {ps}: expected picoseconds"))
        }
        _ => Err(format!("unknown command {line:?}: expected counts, mark, epoch PS or buffer LIMIT")),
    }
}

pub struct Control {
    listener: UnixListener,
    /// Each client, and the part of a line it has sent so far.
    clients: Vec<(BufReader<UnixStream>, String)>,
}

impl Control {
    /// Listens at `path` (replacing a stale socket file).
    pub fn bind(path: &Path) -> io::Result<Control> {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        Ok(Control { listener, clients: Vec::new() })
    }

    /// The listening socket: readable when a client comes (for an epoll loop).
    pub fn fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }

    /// Accepts new clients and answers each complete line they have sent with `answer`; returns
    /// the new clients' sockets still open (an epoll loop watches them for their next lines).
    pub fn poll(&mut self, mut answer: impl FnMut(&str) -> String) -> io::Result<Vec<RawFd>> {
        let mut new = Vec::new();
        while let Ok((stream, _)) = self.listener.accept() {
            stream.set_nonblocking(true)?;
            new.push(stream.as_raw_fd());
            self.clients.push((BufReader::new(stream), String::new()));
        }
        let mut gone = Vec::new();
        for (i, (client, line)) in self.clients.iter_mut().enumerate() {
            // Every line it has sent: the reader may hold several, which no socket event
            // would announce again.
            loop {
                match client.read_line(line) {
                    Ok(0) => gone.push(i),
                    Ok(_) if line.ends_with('\n') => {
                        let reply = answer(line.trim());
                        line.clear();
                        if writeln!(client.get_mut(), "{reply}").is_err() {
                            gone.push(i);
                            break;
                        }
                        continue;
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(_) => gone.push(i),
                }
                break;
            }
        }
        for i in gone.into_iter().rev() {
            self.clients.remove(i);
        }
        // A client accepted in this call may have gone in it too (it read its answer and
        // closed before the next read): its descriptor is closed now and must not be watched.
        new.retain(|fd| self.clients.iter().any(|(c, _)| c.get_ref().as_raw_fd() == *fd));
        Ok(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_and_others_get_one_line_back() {
        assert_eq!(parse("counts"), Ok(Command::Counts));
        assert_eq!(parse("buffer 50pkt"), Ok(Command::Buffer("50pkt".into())));
        assert_eq!(parse("mark"), Ok(Command::Mark));
        assert_eq!(parse("epoch 123"), Ok(Command::Epoch(123)));
        assert!(parse("epoch soon").unwrap_err().contains("epoch soon: expected picoseconds"));
        assert!(parse("buffer").unwrap_err().contains("expected counts, mark, epoch PS or buffer LIMIT"));
        assert!(parse("reboot now").is_err());
    }

    #[test]
    fn a_client_gets_an_answer_per_line() {
        let dir = std::env::temp_dir().join(format!("buflab-control-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("control.sock");
        let mut control = Control::bind(&path).unwrap();
        let mut client = UnixStream::connect(&path).unwrap();
        client.write_all(b"counts\nbuffer 7pkt\n").unwrap();
        let mut replies = Vec::new();
        for _ in 0..100 {
            control
                .poll(|line| match parse(line) {
                    Ok(Command::Counts) => "{\"arrivals\":0}".into(),
                    Ok(Command::Buffer(l)) => format!("{{\"buffer\":\"{l}\"}}"),
                    Ok(Command::Mark | Command::Epoch(_)) => "{}".into(),
                    Err(e) => e,
                })
                .unwrap();
            let mut reader = BufReader::new(client.try_clone().unwrap());
            client.set_nonblocking(true).unwrap();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                replies.push(line.trim().to_string());
                line.clear();
            }
            if replies.len() == 2 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(replies, vec!["{\"arrivals\":0}", "{\"buffer\":\"7pkt\"}"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_client_gone_within_one_poll_is_not_returned() {
        // A client that sends its line and closes before the reply is read is accepted,
        // answered and found gone in the same call: its descriptor is closed by then, so
        // handing it back would have the caller watch a closed (or reused) descriptor. The
        // traffic generator did, and stopped on epoll_ctl's error mid-run.
        let dir = std::env::temp_dir().join(format!("buflab-control-gone-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("control.sock");
        let mut control = Control::bind(&path).unwrap();
        let mut client = UnixStream::connect(&path).unwrap();
        client.write_all(b"counts\n").unwrap();
        drop(client);
        let mut answered = 0;
        let new = control
            .poll(|_| {
                answered += 1;
                "{}".into()
            })
            .unwrap();
        assert_eq!(answered, 1);
        assert!(new.is_empty(), "returned the closed descriptors {new:?}");
        assert!(control.clients.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

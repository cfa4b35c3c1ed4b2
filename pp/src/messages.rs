//! Matching each received message to its send, as MPI does: per communicator, sender,
//! receiver and tag, in the order they were sent (MPI's non-overtaking rule). The log gives a
//! `send` when a message leaves and a `recv` when it has arrived, so the send comes first.

use std::collections::{HashMap, VecDeque};

use crate::event::{Sym, ThreadId};

/// (communicator, sender, receiver, tag).
type Channel = (Option<Sym>, ThreadId, ThreadId, u32);

/// Sends not received yet, per channel, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    pending: HashMap<Channel, VecDeque<Sent>>,
    /// Messages matched so far.
    pub matched: u64,
}

/// A send waiting for its receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sent {
    /// When it was sent, ns.
    pub t: u64,
    /// Bytes sent.
    pub bytes: u64,
}

impl Messages {
    /// Thread `from` sends `bytes` to `to` at `t`.
    pub fn send(&mut self, comm: Option<Sym>, from: ThreadId, to: ThreadId, tag: u32, sent: Sent) {
        self.pending
            .entry((comm, from, to, tag))
            .or_default()
            .push_back(sent);
    }

    /// Thread `to` has received a message from `from`: the oldest send of that channel not
    /// matched yet, if there is one.
    pub fn recv(
        &mut self,
        comm: Option<Sym>,
        from: ThreadId,
        to: ThreadId,
        tag: u32,
    ) -> Option<Sent> {
        let queue = self.pending.get_mut(&(comm, from, to, tag))?;
        let sent = queue.pop_front()?;
        self.matched += 1;
        Some(sent)
    }

    /// The sends never received: how many, and the earliest (sender, receiver, tag, time).
    pub fn unreceived(&self) -> (usize, Option<(ThreadId, ThreadId, u32, u64)>) {
        let mut n = 0;
        let mut first: Option<(ThreadId, ThreadId, u32, u64)> = None;
        for (&(_, from, to, tag), queue) in &self.pending {
            n += queue.len();
            if let Some(s) = queue.front()
                && first.is_none_or(|f| (s.t, from) < (f.3, f.0))
            {
                first = Some((from, to, tag, s.t));
            }
        }
        (n, first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(t: u64, bytes: u64) -> Sent {
        Sent { t, bytes }
    }

    #[test]
    fn messages_match_in_order_per_channel() {
        let mut m = Messages::default();
        m.send(None, 0, 1, 5, sent(10, 8));
        m.send(None, 0, 1, 5, sent(20, 16));
        m.send(None, 0, 1, 6, sent(30, 32));
        m.send(Some(Sym(0)), 0, 1, 5, sent(40, 64));
        // Another tag, another communicator: other channels.
        assert_eq!(m.recv(None, 0, 1, 6), Some(sent(30, 32)));
        assert_eq!(m.recv(Some(Sym(0)), 0, 1, 5), Some(sent(40, 64)));
        // Same channel: in the order sent.
        assert_eq!(m.recv(None, 0, 1, 5), Some(sent(10, 8)));
        assert_eq!(m.recv(None, 0, 1, 5), Some(sent(20, 16)));
        assert_eq!(m.recv(None, 0, 1, 5), None);
        // From another sender: nothing.
        assert_eq!(m.recv(None, 2, 1, 6), None);
        assert_eq!(m.matched, 4);
        assert_eq!(m.unreceived(), (0, None));
        m.send(None, 1, 0, 1, sent(50, 1));
        m.send(None, 0, 1, 1, sent(45, 1));
        m.send(None, 0, 1, 1, sent(60, 1));
        assert_eq!(m.unreceived(), (3, Some((0, 1, 1, 45))));
    }
}

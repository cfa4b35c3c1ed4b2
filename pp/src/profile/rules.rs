//! The lost-cycles categories and the predicates that assign one to every thread-instant
//! (docs/attribution.md), as a table: a category is added or redefined by editing [`RULES`].

use std::fmt;

use crate::event::WaitKind;

/// A lost-cycles category (the order is the paper's Figure 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Load imbalance: idle, or waiting at a barrier, while a team member still works.
    Li,
    /// Insufficient parallelism: idle outside every parallel region.
    Ip,
    /// Synchronization loss: waiting (at a barrier: once nobody on the team works), or idle
    /// in a region where nobody works.
    Sl,
    /// Communication loss: moving data.
    Cl,
    /// Resource contention: work not backed by CPU time (and, with a machine file, data
    /// movement beyond its ideal time).
    Rc,
    /// Pure computation.
    Pc,
}

/// Every category, in report order.
pub const CATEGORIES: [Category; 6] = [
    Category::Li,
    Category::Ip,
    Category::Sl,
    Category::Cl,
    Category::Rc,
    Category::Pc,
];

impl Category {
    /// The datafile key (`li`, `ip`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Category::Li => "li",
            Category::Ip => "ip",
            Category::Sl => "sl",
            Category::Cl => "cl",
            Category::Rc => "rc",
            Category::Pc => "pc",
        }
    }

    /// The name the paper prints.
    pub fn title(self) -> &'static str {
        match self {
            Category::Li => "Load Imbalance",
            Category::Ip => "Insufficient Parallelism",
            Category::Sl => "Synchronization Loss",
            Category::Cl => "Communication Loss",
            Category::Rc => "Resource Contention",
            Category::Pc => "Pure Computation",
        }
    }

    /// Position in [`CATEGORIES`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Sub-categories: (key, parent). They sum to their parent.
pub const SUBCATEGORIES: [(&str, Category); 2] =
    [("rc.cpu", Category::Rc), ("rc.comm", Category::Rc)];

/// The innermost interval a thread is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Own {
    /// Moving data (`comm_begin`..`comm_end`).
    Comm,
    /// Explicit synchronization other than a barrier (`wait_begin lock|cond|recv|send|other`
    /// .. `wait_end`).
    Wait,
    /// Waiting at a barrier (`wait_begin barrier`..`wait_end`): for the rest of the team.
    Barrier,
    /// Useful work (`work_begin`..`work_end`).
    Work,
    /// No interval.
    Idle,
}

impl Own {
    /// Every state, in declaration order (`own as usize` indexes this).
    pub const ALL: [Own; 5] = [Own::Comm, Own::Wait, Own::Barrier, Own::Work, Own::Idle];

    /// The state of a thread inside `wait_begin <kind>`.
    #[inline]
    pub fn waiting_for(kind: WaitKind) -> Own {
        if kind == WaitKind::Barrier {
            Own::Barrier
        } else {
            Own::Wait
        }
    }

    /// Whether a teammate in this state keeps parallel work unfinished (rules 2 and 4:
    /// "another team member is in work or comm").
    #[inline]
    pub fn is_busy(self) -> bool {
        matches!(self, Own::Work | Own::Comm)
    }

    /// Whether this is a wait of any kind (a `wait_end` closes the innermost one, whatever
    /// kind it names).
    #[inline]
    pub fn is_wait(self) -> bool {
        matches!(self, Own::Wait | Own::Barrier)
    }
}

/// What the predicates look at: the thread's own state and its team's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Situation {
    /// The thread's innermost interval.
    pub own: Own,
    /// The thread is in the team of at least one open region.
    pub in_region: bool,
    /// Another member of such a team is busy (its innermost interval is work or comm).
    pub team_busy: bool,
}

/// One row of the attribution table.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The category it assigns.
    pub category: Category,
    /// When it applies.
    pub when: fn(&Situation) -> bool,
    /// Its wording in docs/attribution.md.
    pub doc: &'static str,
}

/// The attribution table; the first rule that applies wins. The rules of docs/attribution.md.
pub const RULES: [Rule; 8] = [
    Rule {
        category: Category::Cl,
        when: |s| s.own == Own::Comm,
        doc: "comm -> cl (up to the ideal time; the excess is rc with a machine file)",
    },
    Rule {
        category: Category::Li,
        when: |s| s.own == Own::Barrier && s.in_region && s.team_busy,
        doc: "barrier wait while a team member works or communicates -> li (idling while \
              unfinished parallel work exists)",
    },
    Rule {
        category: Category::Ip,
        when: |s| s.own == Own::Barrier && !s.in_region,
        doc: "barrier wait outside every region of the thread -> ip (no parallel work for it: \
              an OpenMP worker waits at the last region's barrier until the next region)",
    },
    Rule {
        category: Category::Sl,
        when: |s| s.own.is_wait(),
        doc: "any other wait -> sl (lock, cond, recv, send, other; a barrier in a region once \
              nobody on the team works)",
    },
    Rule {
        category: Category::Pc,
        when: |s| s.own == Own::Work,
        doc: "work -> pc (the part not backed by CPU time -> rc.cpu; run-queue delay beyond it \
              -> rc.cpu from li, ip, sl after their release)",
    },
    Rule {
        category: Category::Li,
        when: |s| s.own == Own::Idle && s.in_region && s.team_busy,
        doc: "idle in a region while a team member works or communicates -> li",
    },
    Rule {
        category: Category::Sl,
        when: |s| s.own == Own::Idle && s.in_region && !s.team_busy,
        doc: "idle in a region where nobody works (fork/join) -> sl",
    },
    Rule {
        category: Category::Ip,
        when: |s| s.own == Own::Idle && !s.in_region,
        doc: "idle outside every region of the thread -> ip",
    },
];

/// Where run-queue delay outside work comes from: when a `cpu` sample's run-queue delay says
/// the thread was runnable but waiting for a CPU longer than its work lost (rc.cpu from pc),
/// the rest is taken from its time in these categories since the previous sample *after a
/// release* (a barrier's last arrival, a region's fork up to the member's first event since,
/// the last member of its team finishing: docs/attribution.md, "Contention during waits"), in
/// this order of sharing, and counted as rc.cpu. A wait lasts as long as its partner makes it,
/// so the time before its release stays a wait however loaded the machine. (The kernel gives
/// the amount, not the moments: a thread woken at a fork or a barrier waits for a core before
/// it records anything, so the time shows as idle or waiting.)
pub const RUNNABLE_FROM: [Category; 3] = [Category::Li, Category::Ip, Category::Sl];

/// The category of a situation: the first rule of [`RULES`] that applies.
pub fn classify(s: &Situation) -> Category {
    RULES
        .iter()
        .find(|r| (r.when)(s))
        .map(|r| r.category)
        .expect("the rules cover every situation")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_situation_has_exactly_one_first_rule() {
        for (k, own) in Own::ALL.into_iter().enumerate() {
            assert_eq!(own as usize, k);
            for in_region in [false, true] {
                for team_busy in [false, true] {
                    let s = Situation {
                        own,
                        in_region,
                        team_busy,
                    };
                    assert!(RULES.iter().any(|r| (r.when)(&s)), "{s:?}");
                }
            }
        }
        let at = |own, in_region, team_busy| {
            classify(&Situation {
                own,
                in_region,
                team_busy,
            })
        };
        assert_eq!(at(Own::Idle, true, true), Category::Li);
        assert_eq!(at(Own::Idle, true, false), Category::Sl);
        assert_eq!(at(Own::Idle, false, true), Category::Ip);
        assert_eq!(at(Own::Barrier, true, true), Category::Li);
        assert_eq!(at(Own::Barrier, true, false), Category::Sl);
        // A worker waiting at the barrier of a region that has ended (libomp's workers until
        // the next region): no parallel work for it.
        assert_eq!(at(Own::Barrier, false, false), Category::Ip);
        assert_eq!(at(Own::Barrier, false, true), Category::Ip);
        assert_eq!(at(Own::Wait, false, false), Category::Sl);
        assert_eq!(at(Own::Wait, true, true), Category::Sl);
        for kind in WaitKind::ALL {
            let own = Own::waiting_for(kind);
            assert!(own.is_wait() && !own.is_busy());
            assert_eq!(own == Own::Barrier, kind == WaitKind::Barrier);
        }
    }
}

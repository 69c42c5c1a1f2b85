//! What each conversation last saw of each file, and who wrote what:
//! the ground for refusing a write over work the writer never saw.
//!
//! A conversation's [`View`] holds, per file it read or wrote through
//! tether, the content's digest and when (and the text itself, for a
//! short diff of what moved under it, while the view's text budget
//! lasts). The run's [`WriteLog`] holds, per file, the last write made
//! through tether: which conversation, and the digest it left. Together
//! they answer "changed since you read it at 10:42:07, by conversation
//! 7f3a…" — or "by a program outside tether", when the content now is no
//! write of tether's — and, when tether cannot tell (its log forgot that
//! far back), "by whom unknown". Never a guess.
//!
//! Both are bounded: a view keeps [`MAX_FILES_PER_VIEW`] files (the oldest
//! forgotten first) and [`MAX_TEXT_PER_VIEW`] bytes of text; the log
//! keeps [`MAX_WRITES_LOGGED`] files. A view goes when its conversation
//! ends.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::hash::Hasher as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use parking_lot::Mutex;

/// Files one conversation's view remembers; past it the oldest is forgotten.
pub const MAX_FILES_PER_VIEW: usize = 20_000;
/// Text one view keeps for diffs, in bytes; past it the oldest texts are
/// dropped (their digests stay).
pub const MAX_TEXT_PER_VIEW: usize = 32 * 1024 * 1024;
/// The largest file whose text a view keeps for a diff.
pub const MAX_TEXT_PER_FILE: usize = 1024 * 1024;
/// Files the run's write log remembers.
pub const MAX_WRITES_LOGGED: usize = 100_000;
/// Lines of a "what changed under you" diff shown; the rest counted.
pub const MAX_DIFF_LINES: usize = 20;

/// A content's fingerprint: its length and a 64-bit hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest {
    len: u64,
    hash: u64,
}

impl Digest {
    /// What the write log holds for a file tether deleted.
    pub const DELETED: Digest = Digest { len: u64::MAX, hash: 0 };

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        hasher.write(bytes);
        Digest { len: bytes.len() as u64, hash: hasher.finish() }
    }

    /// The digest of the file at `path`, read whole.
    pub fn of_file(path: &Path) -> std::io::Result<Self> {
        std::fs::read(path).map(|bytes| Digest::of(&bytes))
    }
}

/// What a conversation saw of a file.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Its content's digest.
    pub digest: Digest,
    /// When.
    pub at: SystemTime,
    /// Its text, when kept (UTF-8, at most [`MAX_TEXT_PER_FILE`], within
    /// the view's budget).
    pub text: Option<Arc<str>>,
}

/// One conversation's files, oldest first by when they were last seen.
#[derive(Default)]
struct View {
    files: HashMap<PathBuf, (u64, Seen)>,
    order: BTreeMap<u64, PathBuf>,
    /// The entries that still hold their text, oldest first.
    texts: BTreeMap<u64, PathBuf>,
    tick: u64,
    text_bytes: usize,
    /// The watcher's batch number at the end of its latest call.
    call_seq: Option<u64>,
    /// Files it wrote over content it had not seen (another changed them
    /// since it read them), with who had: named in its next change note,
    /// though the file now holds its own write.
    replaced_unseen: HashMap<PathBuf, Who>,
}

impl View {
    fn put(&mut self, path: &Path, seen: Seen) {
        self.tick += 1;
        self.remove(path);
        if let Some(text) = &seen.text {
            self.text_bytes += text.len();
            self.texts.insert(self.tick, path.to_path_buf());
        }
        self.files.insert(path.to_path_buf(), (self.tick, seen));
        self.order.insert(self.tick, path.to_path_buf());
        while self.files.len() > MAX_FILES_PER_VIEW {
            let Some((_, oldest)) = self.order.first_key_value().map(|(t, p)| (*t, p.clone())) else { break };
            self.remove(&oldest);
        }
        // Past the text budget, the oldest texts go; their digests stay.
        while self.text_bytes > MAX_TEXT_PER_VIEW {
            let Some((_, path)) = self.texts.pop_first() else { break };
            if let Some((_, seen)) = self.files.get_mut(&path)
                && let Some(text) = seen.text.take()
            {
                self.text_bytes -= text.len();
            }
        }
    }

    fn remove(&mut self, path: &Path) {
        if let Some((tick, old)) = self.files.remove(path) {
            self.order.remove(&tick);
            if let Some(text) = old.text {
                self.texts.remove(&tick);
                self.text_bytes -= text.len();
            }
        }
    }
}

/// The last write tether made to a file.
#[derive(Debug, Clone)]
struct Written {
    conversation: Arc<str>,
    digest: Digest,
    tick: u64,
}

/// The run's last write per file, bounded.
#[derive(Default)]
struct WriteLog {
    files: HashMap<PathBuf, Written>,
    order: BTreeMap<u64, PathBuf>,
    tick: u64,
    /// Whether anything was ever forgotten: a content no write of the log
    /// made may then be one it forgot.
    forgot: bool,
}

/// Who changed a file since a conversation saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Who {
    /// Another conversation of this run, through tether.
    Conversation(Arc<str>),
    /// A program outside tether: the content now is no write of tether's.
    Outside,
    /// tether cannot tell.
    Unknown,
}

impl Who {
    /// "by conversation 7f3a…", "by a program outside tether", "by whom unknown".
    pub fn phrase(&self) -> String {
        match self {
            Who::Conversation(id) => format!("by conversation {}", short_id(id)),
            Who::Outside => "by a program outside tether".to_string(),
            Who::Unknown => "by whom unknown".to_string(),
        }
    }
}

/// A conversation id as answers show it: whole up to 40 characters (an
/// MCP session's `mcp NAME VERSION #N`), else its first 12 characters, `…`,
/// and its `#N` when it has one — so two sessions of one client stay told
/// apart.
pub fn short_id(id: &str) -> String {
    const WHOLE_UP_TO: usize = 40;
    if id.chars().count() <= WHOLE_UP_TO {
        return id.to_string();
    }
    let head: String = id.chars().take(12).collect();
    match id.rfind(" #") {
        Some(at) if id.len() - at <= 12 => format!("{head}…{}", &id[at..]),
        _ => format!("{head}…"),
    }
}

/// What a file became since a conversation last saw it.
#[derive(Debug, Clone)]
pub struct Moved {
    /// What the conversation saw, and when.
    pub seen: Seen,
    /// Who changed it.
    pub who: Who,
}

/// Where a line of a file, as a conversation last saw it, stands now.
#[derive(Debug, Clone)]
pub enum LineNow {
    /// As seen: the file is what the conversation saw, or the view kept no
    /// text of it to hold the line against.
    AsSeen,
    /// The file changed since, the line itself did not: its number now.
    Moved { now: u32, moved: Moved },
    /// The file changed since, and so did the line (or it is gone).
    Changed { moved: Moved },
}

/// Every conversation's view and the run's write log.
#[derive(Default)]
pub struct Views {
    views: Mutex<HashMap<Arc<str>, View>>,
    log: Mutex<WriteLog>,
}

impl Views {
    /// `conversation` read `path`, whose content is `bytes`.
    pub fn saw(&self, conversation: &str, path: &Path, bytes: &[u8]) {
        let text = (bytes.len() <= MAX_TEXT_PER_FILE).then(|| std::str::from_utf8(bytes).ok()).flatten();
        let seen = Seen { digest: Digest::of(bytes), at: SystemTime::now(), text: text.map(Arc::from) };
        self.views.lock().entry(Arc::from(conversation)).or_default().put(path, seen);
    }

    /// `conversation` wrote over `replaced` (what `path` held before its
    /// write): when it had seen the file and that is not what it saw,
    /// another changed the file since, and its next change note says who.
    pub fn replaced(&self, conversation: &str, path: &Path, replaced: Option<&[u8]>) {
        let digest = replaced.map_or(Digest::DELETED, Digest::of);
        let Some(seen) = self.seen(conversation, path) else { return };
        if seen.digest == digest {
            return;
        }
        let who = self.who_wrote(conversation, path, digest);
        if let Some(view) = self.views.lock().get_mut(conversation) {
            view.replaced_unseen.insert(path.to_path_buf(), who);
        }
    }

    /// Who changed `path` before `conversation` wrote over it unseen, if
    /// another did since its previous change note; taken once.
    pub fn take_replaced(&self, conversation: &str, path: &Path) -> Option<Who> {
        self.views.lock().get_mut(conversation)?.replaced_unseen.remove(path)
    }

    /// `conversation` wrote `bytes` to `path` through tether (`None`: it
    /// deleted the file).
    pub fn wrote(&self, conversation: &str, path: &Path, bytes: Option<&[u8]>) {
        let digest = match bytes {
            Some(bytes) => {
                self.saw(conversation, path, bytes);
                Digest::of(bytes)
            }
            None => {
                if let Some(view) = self.views.lock().get_mut(conversation) {
                    view.remove(path);
                }
                Digest::DELETED
            }
        };
        let mut log = self.log.lock();
        log.tick += 1;
        let tick = log.tick;
        let written = Written { conversation: Arc::from(conversation), digest, tick };
        if let Some(old) = log.files.insert(path.to_path_buf(), written) {
            log.order.remove(&old.tick);
        }
        log.order.insert(tick, path.to_path_buf());
        while log.files.len() > MAX_WRITES_LOGGED {
            let Some((_, oldest)) = log.order.pop_first() else { break };
            log.files.remove(&oldest);
            log.forgot = true;
        }
    }

    /// What `conversation` last saw of `path`, if it saw it.
    pub fn seen(&self, conversation: &str, path: &Path) -> Option<Seen> {
        self.views.lock().get(conversation).and_then(|v| v.files.get(path)).map(|(_, s)| s.clone())
    }

    /// Whether `path`, whose content is now `now`, changed since
    /// `conversation` last saw it, and by whom; `None` when it did not or
    /// the conversation never saw it.
    pub fn moved(&self, conversation: &str, path: &Path, now: &[u8]) -> Option<Moved> {
        let seen = self.seen(conversation, path)?;
        let digest = Digest::of(now);
        (seen.digest != digest).then(|| Moved { seen, who: self.who_wrote(conversation, path, digest) })
    }

    /// Where line `line` (1-based) of `path`, as `conversation` last saw
    /// it, stands in the content `now`: a write tool given a line holds it
    /// against what its caller read, never against whatever stands at
    /// that number after another changed the file.
    pub fn line_now(&self, conversation: &str, path: &Path, line: u32, now: &[u8]) -> LineNow {
        let Some(moved) = self.moved(conversation, path, now) else { return LineNow::AsSeen };
        let Some(seen) = moved.seen.text.clone() else { return LineNow::AsSeen };
        match tether_actors::text::line_now(&seen, &String::from_utf8_lossy(now), line) {
            Some(now) => LineNow::Moved { now, moved },
            None => LineNow::Changed { moved },
        }
    }

    /// Who left `path` holding the content `digest` ([`Digest::DELETED`]:
    /// who deleted it), as `conversation` is told.
    pub fn who_wrote(&self, conversation: &str, path: &Path, digest: Digest) -> Who {
        let log = self.log.lock();
        match log.files.get(path) {
            Some(w) if w.digest == digest && *w.conversation != *conversation => {
                Who::Conversation(w.conversation.clone())
            }
            Some(w) if w.digest == digest => Who::Unknown,
            _ if log.forgot => Who::Unknown,
            _ => Who::Outside,
        }
    }

    /// Sets `conversation`'s latest call's sync point (the watcher's batch
    /// number at its end) and returns the previous call's, if it made one.
    pub fn swap_call_seq(&self, conversation: &str, seq: u64) -> Option<u64> {
        let mut views = self.views.lock();
        views.entry(Arc::from(conversation)).or_default().call_seq.replace(seq)
    }

    /// The conversation ended: its view goes.
    pub fn forget(&self, conversation: &str) {
        self.views.lock().remove(conversation);
    }

    /// How many files `conversation`'s view holds.
    pub fn files_seen(&self, conversation: &str) -> usize {
        self.views.lock().get(conversation).map_or(0, |v| v.files.len())
    }
}

/// `HH:MM:SS UTC`: when a file was seen, or a list went stale.
pub fn clock(at: SystemTime) -> String {
    let secs = at.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0) % 86_400;
    format!("{:02}:{:02}:{:02} UTC", secs / 3600, secs / 60 % 60, secs % 60)
}

/// What changed between the text a conversation saw and the text now, as
/// a short unified diff (at most [`MAX_DIFF_LINES`] lines, the cut said);
/// `None` when the text seen was not kept.
pub fn what_moved(seen: &Seen, now: &[u8]) -> Option<String> {
    let before = seen.text.as_deref()?;
    let now = String::from_utf8_lossy(now);
    let text = tether_actors::text::line_diff(before, &now, 1);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    for line in lines.iter().take(MAX_DIFF_LINES) {
        let _ = writeln!(out, "  {line}");
    }
    if lines.len() > MAX_DIFF_LINES {
        let _ = writeln!(out, "  … {} more diff lines not shown", lines.len() - MAX_DIFF_LINES);
    }
    Some(out.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_held_against_what_its_conversation_read() {
        let views = Views::default();
        let path = Path::new("/w/dup.py");
        let read = b"class A:\n    def close(self):\n        pass\n";
        views.saw("A", path, read);
        assert!(matches!(views.line_now("A", path, 2, read), LineNow::AsSeen));
        let shifted = b"import os\n\nclass A:\n    def close(self):\n        pass\n";
        views.wrote("B", path, Some(shifted));
        match views.line_now("A", path, 2, shifted) {
            LineNow::Moved { now, moved } => {
                assert_eq!(now, 4);
                assert_eq!(moved.who, Who::Conversation("B".into()));
            }
            other => panic!("{other:?}"),
        }
        let renamed = b"class A:\n    def shut(self):\n        pass\n";
        views.wrote("B", path, Some(renamed));
        assert!(matches!(views.line_now("A", path, 2, renamed), LineNow::Changed { .. }));
        // B's own view is what B wrote.
        assert!(matches!(views.line_now("B", path, 2, renamed), LineNow::AsSeen));
    }

    #[test]
    fn who_changed_a_file_is_known_or_said_unknown() {
        let views = Views::default();
        let path = Path::new("/w/a.py");
        views.saw("A", path, b"one\n");
        assert!(views.moved("A", path, b"one\n").is_none(), "unchanged");
        views.wrote("B", path, Some(b"two\n"));
        let moved = views.moved("A", path, b"two\n").unwrap();
        assert_eq!(moved.who, Who::Conversation("B".into()));
        assert_eq!(moved.who.phrase(), "by conversation B");
        assert_eq!(views.moved("A", path, b"three\n").unwrap().who, Who::Outside, "no write of tether's");
        assert!(views.moved("C", path, b"two\n").is_none(), "C never saw it");
        let diff = what_moved(&moved.seen, b"two\n").unwrap();
        assert!(diff.contains("-one") && diff.contains("+two"), "{diff}");
        views.forget("A");
        assert!(views.seen("A", path).is_none());
    }

    #[test]
    fn two_sessions_of_one_client_are_told_apart() {
        assert_eq!(short_id("mcp claude-code 1.2.3 #7"), "mcp claude-code 1.2.3 #7");
        let long = "mcp a-client-with-a-very-long-name 10.20.30-beta #12";
        assert_eq!(short_id(long), "mcp a-client… #12");
        assert_ne!(short_id(long), short_id(&long.replace("#12", "#13")));
        assert_eq!(short_id(&"7f3a".repeat(16)), format!("{}…", "7f3a".repeat(3)));
    }

    #[test]
    fn a_view_stays_bounded_over_a_hundred_thousand_files_read() {
        let views = Views::default();
        let text = "x".repeat(4096);
        for k in 0..100_000 {
            views.saw("A", &PathBuf::from(format!("/w/{k}.py")), text.as_bytes());
        }
        assert_eq!(views.files_seen("A"), MAX_FILES_PER_VIEW);
        assert!(views.seen("A", Path::new("/w/0.py")).is_none(), "the oldest forgotten first");
        assert!(
            views.seen("A", Path::new("/w/99999.py")).unwrap().text.is_some(),
            "the newest keeps its text"
        );
        let kept = views.views.lock()["A"].text_bytes;
        assert!(kept <= MAX_TEXT_PER_VIEW, "text within its budget: {kept}");
    }

    #[test]
    fn a_forgetting_log_says_unknown_rather_than_outside() {
        let views = Views::default();
        views.saw("A", Path::new("/w/a.py"), b"one\n");
        for k in 0..MAX_WRITES_LOGGED + 1 {
            views.wrote("B", &PathBuf::from(format!("/w/{k}.txt")), Some(b"x"));
        }
        assert_eq!(views.moved("A", Path::new("/w/a.py"), b"two\n").unwrap().who, Who::Unknown);
    }
}

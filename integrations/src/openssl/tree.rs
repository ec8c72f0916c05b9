//! The OpenSSL source tree a series is written against, the edits a patch makes to it, and
//! their rendering as the diff of a `git format-patch` mail.
//!
//! An edit replaces a block of whole lines that must occur exactly once in the file as it is
//! at that point of the series (after the earlier patches); the diff's context is taken
//! from the tree itself, so kgen holds only the short anchor lines, never OpenSSL's files.

use similar::{Algorithm, ChangeTag, TextDiff};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A source tree with the edits made so far.
pub struct Tree {
    root: PathBuf,
    /// Files as the earlier patches left them (read from the tree on first use).
    current: BTreeMap<String, String>,
    /// Files the patch being written has touched: their content before it (None: new).
    touched: BTreeMap<String, Option<String>>,
}

/// One file's change in a patch.
#[derive(Clone, Debug)]
pub struct FileDiff {
    pub path: String,
    /// None for a new file.
    pub old: Option<String>,
    pub new: String,
}

impl Tree {
    pub fn open(root: &Path) -> Tree {
        Tree { root: root.to_path_buf(), current: BTreeMap::new(), touched: BTreeMap::new() }
    }

    /// The file's text at this point of the series.
    pub fn read(&mut self, path: &str) -> Result<&str, String> {
        if !self.current.contains_key(path) {
            let p = self.root.join(path);
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            self.current.insert(path.to_string(), text);
        }
        Ok(&self.current[path])
    }

    /// Replaces the lines `old` (one or more whole lines, without the final newline) with
    /// `new`; `old` must occur exactly once. `new` empty deletes the lines.
    pub fn replace(&mut self, path: &str, old: &str, new: &str) -> Result<(), String> {
        let text = self.read(path)?.to_string();
        let hits = line_block_matches(&text, old);
        let at = match hits.as_slice() {
            [at] => *at,
            [] => return Err(format!("{path}: the lines `{}` are not in the file (is the tree OpenSSL's, unmodified?)", first_line(old))),
            _ => return Err(format!("{path}: the lines `{}` occur {} times; the edit needs one", first_line(old), hits.len())),
        };
        let mut out = String::with_capacity(text.len() + new.len());
        out.push_str(&text[..at]);
        if !new.is_empty() {
            out.push_str(new);
            out.push('\n');
        }
        out.push_str(&text[at + old.len() + 1..]);
        self.set(path, out);
        Ok(())
    }

    /// Inserts `text` (whole lines) after the lines `anchor`.
    pub fn insert_after(&mut self, path: &str, anchor: &str, text: &str) -> Result<(), String> {
        self.replace(path, anchor, &format!("{anchor}\n{text}"))
    }

    /// Inserts `text` (whole lines) before the lines `anchor`.
    pub fn insert_before(&mut self, path: &str, anchor: &str, text: &str) -> Result<(), String> {
        self.replace(path, anchor, &format!("{text}\n{anchor}"))
    }

    /// Creates a new file (an error if it exists in the tree or the series).
    pub fn create(&mut self, path: &str, text: &str) -> Result<(), String> {
        if self.current.contains_key(path) || self.root.join(path).exists() {
            return Err(format!("{path}: already exists; the series adds it"));
        }
        self.touched.entry(path.to_string()).or_insert(None);
        self.current.insert(path.to_string(), text.to_string());
        Ok(())
    }

    fn set(&mut self, path: &str, text: String) {
        let before = self.current.insert(path.to_string(), text);
        self.touched.entry(path.to_string()).or_insert(before);
    }

    /// The changes since the last call (one patch's), in path order.
    pub fn take_diffs(&mut self) -> Vec<FileDiff> {
        std::mem::take(&mut self.touched).into_iter().map(|(path, old)| FileDiff { new: self.current[&path].clone(), path, old }).collect()
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Byte offsets where `block` starts at a line start and ends at a line end.
fn line_block_matches(text: &str, block: &str) -> Vec<usize> {
    let mut hits = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(block) {
        let at = from + i;
        let starts_line = at == 0 || text.as_bytes()[at - 1] == b'\n';
        let ends_line = text.as_bytes().get(at + block.len()) == Some(&b'\n');
        if starts_line && ends_line {
            hits.push(at);
        }
        from = at + 1;
    }
    hits
}

/// Lines added and removed.
pub fn counts(d: &FileDiff) -> (usize, usize) {
    let old = d.old.as_deref().unwrap_or("");
    let diff = TextDiff::configure().algorithm(Algorithm::Myers).diff_lines(old, &d.new);
    let (mut add, mut del) = (0, 0);
    for c in diff.iter_all_changes() {
        match c.tag() {
            ChangeTag::Insert => add += 1,
            ChangeTag::Delete => del += 1,
            ChangeTag::Equal => {}
        }
    }
    (add, del)
}

/// The `diff --git` section of one file, as git writes it (3 lines of context, blob ids).
pub fn git_diff(d: &FileDiff) -> String {
    let old = d.old.as_deref().unwrap_or("");
    let mut s = format!("diff --git a/{p} b/{p}\n", p = d.path);
    let (a, b) = (blob_id(old.as_bytes()), blob_id(d.new.as_bytes()));
    match &d.old {
        None => {
            s.push_str(&format!("new file mode 100644\nindex 0000000..{}\n--- /dev/null\n", &b[..7]));
        }
        Some(_) => s.push_str(&format!("index {}..{} 100644\n--- a/{}\n", &a[..7], &b[..7], d.path)),
    }
    s.push_str(&format!("+++ b/{}\n", d.path));
    let diff = TextDiff::configure().algorithm(Algorithm::Myers).diff_lines(old, &d.new);
    for h in diff.unified_diff().context_radius(3).iter_hunks() {
        s.push_str(&h.to_string());
    }
    s
}

/// Git's object id of a blob (SHA-1 of `blob <len>\0` and the bytes), in hex.
pub fn blob_id(bytes: &[u8]) -> String {
    let mut m = format!("blob {}\0", bytes.len()).into_bytes();
    m.extend_from_slice(bytes);
    sha1(&m).iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-1 (FIPS 180-4), for git object ids only.
fn sha1(msg: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476, 0xc3d2_e1f0];
    let mut data = msg.to_vec();
    data.push(0x80);
    while data.len() % 64 != 56 {
        data.push(0);
    }
    data.extend_from_slice(&((msg.len() as u64) * 8).to_be_bytes());
    for block in data.chunks(64) {
        let mut w = [0u32; 80];
        for (i, c) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes(c.try_into().expect("4 bytes"));
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i / 20 {
                0 => ((b & c) | (!b & d), 0x5a82_7999),
                1 => (b ^ c ^ d, 0x6ed9_eba1),
                2 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
                _ => (b ^ c ^ d, 0xca62_c1d6),
            };
            let t = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            (e, d, c, b, a) = (d, c, b.rotate_left(30), a, t);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_are_gits() {
        // `git hash-object` of an empty file and of "hello\n".
        assert_eq!(blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(blob_id(b"hello\n"), "ce013625030ba8dba906f756967f9e9ca394464a");
    }

    #[test]
    fn anchors_match_whole_lines_once() {
        let t = "a\nab\nb\nab\n";
        assert_eq!(line_block_matches(t, "a"), vec![0]);
        assert_eq!(line_block_matches(t, "ab").len(), 2);
        assert_eq!(line_block_matches(t, "b"), vec![5]);
        assert_eq!(line_block_matches(t, "a\nab"), vec![0]);
        assert!(line_block_matches(t, "x").is_empty());
    }
}

//! The small project tree every case starts from.
//!
//! It is created from code (not checked-in files) so that modes and mtimes are exact
//! and the same in both copies: every file and directory gets a fixed mtime, so even
//! `stat`, `ls -l` and `date -r` are deterministic.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The fixed mtime of every fixture entry: 2024-01-15 12:00:00 UTC.
pub const MTIME: u64 = 1_705_320_000;

const MAIN_RS: &str = r#"use std::env;

/// Entry point.
fn main() {
    let args: Vec<String> = env::args().collect();
    // TODO: handle errors properly
    let name = args.get(1).map(String::as_str).unwrap_or("world");
    println!("Hello, {}!", name);
    println!("double: {}", helper(21));
}

fn helper(x: i32) -> i32 {
    x * 2 // FIXME: overflow
}

#[cfg(test)]
mod tests {
    #[test]
    fn it_works() {
        assert_eq!(super::helper(2), 4);
    }
}
"#;

const LIB_PY: &str = r#"import os
import sys


def greet(name):
    """Return a greeting."""
    return f"Hello, {name}!"


class Counter:
    def __init__(self):
        self.count = 0

    def incr(self, n=1):
        # TODO: guard against negative n
        self.count += n
        return self.count


def main():
    print(greet(sys.argv[1] if len(sys.argv) > 1 else "world"))


if __name__ == "__main__":
    main()
"#;

const UTIL_MOD_RS: &str = r#"//! Small helpers.

pub fn clamp(v: i64, lo: i64, hi: i64) -> i64 {
    v.max(lo).min(hi)
}

pub fn is_even(n: u32) -> bool {
    n % 2 == 0
}
"#;

const README: &str = r#"# Demo Project

A tiny project used by the safesh differential tests.

## Usage

Run the program:

    cargo run -- Alice

## Files

- `src/main.rs`: the entry point
- `src/lib.py`: a Python helper
- `data.csv`: sample data
- `config.json`: settings

## TODO

- [ ] add tests
- [x] write README
See https://example.com/docs for more.
"#;

const DATA_CSV: &str = r#"id,name,city,score,email
1,Alice,Paris,88,alice@example.com
2,Bob,London,72,bob@example.org
3,Carol,Berlin,95,carol@example.com
4,Dave,Paris,61,
5,Eve,Madrid,79,eve@example.net
6,Frank,London,88,frank@example.com
7,"Smith, Jr.",Boston,70,smith@example.com
8,Grace,Berlin,,grace@example.org
9,Heidi,Paris,99,heidi@example.com
10,Ivan,Moscow,55,ivan@example.ru
11,Judy,London,67,judy@example.com
12,Mallory,Berlin,42,mallory@example.net
13,Niaj,Madrid,88,niaj@example.com
14,Olivia,Paris,73,olivia@example.org
15,Peggy,Boston,91,peggy@example.com
"#;

const APP_LOG: &str = r#"2024-01-15 10:00:01 INFO Server started on port 8080
2024-01-15 10:00:02 INFO Connected to database db01
2024-01-15 10:01:15 WARN Slow query took 1532ms
2024-01-15 10:02:00 INFO GET /api/users 200
2024-01-15 10:02:03 INFO GET /api/users/42 200
2024-01-15 10:02:05 ERROR Failed to load user 43: not found
2024-01-15 10:03:10 INFO POST /api/login 200
2024-01-15 10:03:11 WARN Deprecated endpoint /api/v1/login used
2024-01-15 10:04:00 ERROR Database connection lost
2024-01-15 10:04:01 INFO Reconnecting to database db01
2024-01-15 10:04:02 INFO Connected to database db01
2024-01-15 10:05:30 INFO GET /api/items 200
2024-01-15 10:05:31 WARN Cache miss rate 45%
2024-01-15 10:06:00 ERROR Timeout after 30s on /api/report
2024-01-15 10:07:00 INFO GET /api/health 200
2024-01-15 10:08:12 INFO Shutting down
"#;

const CONFIG_JSON: &str = r#"{
  "name": "demo",
  "version": "1.2.3",
  "debug": false,
  "port": 8080,
  "tags": ["web", "api", "demo"],
  "database": {
    "host": "localhost",
    "port": 5432,
    "replicas": [
      {"host": "db1.local", "weight": 3},
      {"host": "db2.local", "weight": 1}
    ]
  },
  "users": [
    {"id": 1, "name": "alice", "roles": ["admin", "dev"], "active": true},
    {"id": 2, "name": "bob", "roles": ["dev"], "active": false},
    {"id": 3, "name": "carol", "roles": [], "active": true}
  ],
  "limits": null
}
"#;

const SETTINGS_INI: &str = r#"; main settings
[general]
name = demo
verbose = true

[server]
host = 0.0.0.0
port = 8080
timeout = 30

[paths]
data = /var/lib/demo
logs = /var/log/demo
"#;

const NOTES_TXT: &str = "Notes\n\
café au lait\n\
naïve résumé\n\
日本語のテキスト\n\
emoji: 🎉 done\n\
tab\there\n\
last line without newline";

const GUIDE_INTRO: &str = "# Intro\n\nWelcome to the guide.\nTODO: write more.\n";
const GUIDE_ADVANCED: &str = "# Advanced\n\nDeep topics live here.\n";
const API_MD: &str = "# API\n\nGET /api/users\nPOST /api/login\n";
const BUILD_SH: &str = "#!/bin/sh\necho building\n";
const GITIGNORE: &str = "target/\n*.tmp\n";
const SPACES_TXT: &str = "this file has spaces in its name\n";

/// Files of the fixture: path, content, mode.
const FILES: &[(&str, &str, u32)] = &[
    ("src/main.rs", MAIN_RS, 0o644),
    ("src/lib.py", LIB_PY, 0o644),
    ("src/util/mod.rs", UTIL_MOD_RS, 0o644),
    ("README.md", README, 0o644),
    ("data.csv", DATA_CSV, 0o644),
    ("app.log", APP_LOG, 0o644),
    ("config.json", CONFIG_JSON, 0o644),
    ("settings.ini", SETTINGS_INI, 0o644),
    ("notes.txt", NOTES_TXT, 0o644),
    ("empty.txt", "", 0o644),
    ("my file.txt", SPACES_TXT, 0o644),
    ("docs/api.md", API_MD, 0o644),
    ("docs/guide/intro.md", GUIDE_INTRO, 0o644),
    ("docs/guide/advanced.md", GUIDE_ADVANCED, 0o644),
    ("scripts/build.sh", BUILD_SH, 0o755),
    (".gitignore", GITIGNORE, 0o644),
];

/// Directories of the fixture, deepest first (their mtimes are set last).
const DIRS: &[&str] = &["src/util", "src", "docs/guide", "docs", "scripts", "."];

/// Create the fixture tree inside `root` (which must exist and be empty).
pub fn create(root: &Path) -> io::Result<()> {
    let mtime = SystemTime::UNIX_EPOCH + Duration::from_secs(MTIME);
    for (path, content, mode) in FILES {
        let p = root.join(path);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&p, content)?;
        fs::set_permissions(&p, fs::Permissions::from_mode(*mode))?;
        fs::File::options()
            .write(true)
            .open(&p)?
            .set_modified(mtime)?;
    }
    for dir in DIRS {
        let p = root.join(dir);
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755))?;
        fs::File::open(&p)?.set_modified(mtime)?;
    }
    Ok(())
}

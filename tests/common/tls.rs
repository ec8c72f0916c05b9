//! A real client over a real protocol: the host's curl downloads a 4 MiB body over TLS from
//! an HTTPS server running under QEMU on 127.0.0.1, and checks its SHA-256; through a proxy
//! that changes one byte of one encrypted record in flight, the download must fail with a
//! bad record MAC. The server (OpenSSL's `s_server -WWW`, a Go net/http program) is the
//! caller's; it serves one connection and exits, so its counters are written.

use kgen_harness::oracle::{self, Tool};
use rand::{Rng, SeedableRng};
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The body's size.
pub const BODY: usize = 4 << 20;

/// A download: its name, curl's arguments that choose the protocol version and the cipher
/// suite, and whether it is AES-GCM (else ChaCha20-Poly1305).
pub struct Case {
    pub name: &'static str,
    pub curl: &'static [&'static str],
    pub aes_gcm: bool,
}

pub const CASES: [Case; 4] = [
    Case { name: "TLS 1.3 AES-128-GCM", curl: &["--tlsv1.3", "--tls13-ciphers", "TLS_AES_128_GCM_SHA256"], aes_gcm: true },
    Case { name: "TLS 1.3 AES-256-GCM", curl: &["--tlsv1.3", "--tls13-ciphers", "TLS_AES_256_GCM_SHA384"], aes_gcm: true },
    Case { name: "TLS 1.3 ChaCha20-Poly1305", curl: &["--tlsv1.3", "--tls13-ciphers", "TLS_CHACHA20_POLY1305_SHA256"], aes_gcm: false },
    Case { name: "TLS 1.2 ECDHE-ECDSA-AES128-GCM-SHA256", curl: &["--tlsv1.2", "--tls-max", "1.2", "--ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"], aes_gcm: true },
];

/// The host's tools: curl and openssl (for the certificate).
pub struct Client {
    curl: Tool,
    openssl: Tool,
}

pub fn client() -> Option<Client> {
    Some(Client { curl: oracle::host_tool("curl")?, openssl: oracle::host_tool("openssl")? })
}

/// The served directory with `body.bin`, and a P-256 certificate and key for `localhost`.
pub struct Site {
    pub www: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    sha256: Vec<u8>,
}

impl Client {
    pub fn site(&self, dir: &Path) -> Site {
        let www = dir.join("www");
        std::fs::create_dir_all(&www).unwrap();
        let mut body = vec![0u8; BODY];
        rand_chacha::ChaCha8Rng::seed_from_u64(4).fill(&mut body[..]);
        std::fs::write(www.join("body.bin"), &body).unwrap();
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        let o = self
            .openssl
            .command()
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .unwrap();
        assert!(o.status.success(), "openssl req: {}", String::from_utf8_lossy(&o.stderr));
        Site { www, cert, key, sha256: Sha256::digest(&body).to_vec() }
    }
}

/// A port free on 127.0.0.1 a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// What one download did.
pub struct Download {
    /// curl succeeded and the body's SHA-256 matched.
    pub ok: bool,
    /// curl's exit status and the last line of its standard error.
    pub curl: String,
    /// curl's whole standard error (`-v`: the TLS messages and alerts it sent).
    pub curl_log: String,
    /// The server's standard output and error.
    pub server: String,
}

/// Starts `server` (which must print `ready` on standard output once it listens on
/// `port`, serve one connection and exit), downloads `body.bin` with `case`'s arguments,
/// through a proxy that changes a byte of the 20th encrypted record if `tamper`, and waits
/// for the server to exit.
pub fn download(c: &Client, site: &Site, mut server: Command, ready: &str, port: u16, case: &Case, tamper: bool, dir: &Path) -> Download {
    let mut child: Child = server.stdout(Stdio::piped()).stderr(Stdio::piped()).stdin(Stdio::null()).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let start = Instant::now();
    loop {
        let mut l = String::new();
        if out.read_line(&mut l).unwrap() == 0 {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("{}: the server exited before it listened:\n{seen}{err}", case.name);
        }
        seen.push_str(&l);
        if l.trim() == ready {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(300), "{}: the server did not start:\n{seen}", case.name);
    }
    let drain = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = out.read_to_string(&mut rest);
        rest
    });
    let mut err_pipe = child.stderr.take().unwrap();
    let err_drain = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err_pipe.read_to_string(&mut rest);
        rest
    });
    let (to, proxy) = if tamper {
        let p = free_port();
        let l = TcpListener::bind(("127.0.0.1", p)).unwrap();
        (p, Some(std::thread::spawn(move || flip_one_record(l, port, 20))))
    } else {
        (port, None)
    };
    let got = dir.join("got.bin");
    let _ = std::fs::remove_file(&got);
    let o: Output = c
        .curl
        .command()
        .args(["-v", "-sS", "--fail", "--max-time", "600", "--cacert"])
        .arg(&site.cert)
        .args(["--resolve", &format!("localhost:{to}:127.0.0.1"), "-o"])
        .arg(&got)
        .args(case.curl)
        .arg(format!("https://localhost:{to}/body.bin"))
        .output()
        .unwrap();
    let body_ok = std::fs::read(&got).is_ok_and(|b| Sha256::digest(&b).as_slice() == site.sha256);
    if let Some(p) = proxy {
        let _ = p.join();
    }
    // The server exits after its one connection; a stuck one is killed.
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let server_out = format!("{seen}{}{}", drain.join().unwrap_or_default(), err_drain.join().unwrap_or_default());
    let log = String::from_utf8_lossy(&o.stderr).into_owned();
    let last = log.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    Download { ok: o.status.success() && body_ok, curl: format!("{} {last}", o.status), curl_log: log, server: server_out }
}

/// Forwards one connection to `port`, changing one byte in the middle of the `nth` record
/// of type application_data (23) from the server.
fn flip_one_record(l: TcpListener, port: u16, nth: usize) {
    let Ok((mut client, _)) = l.accept() else { return };
    let Ok(mut server) = TcpStream::connect(("127.0.0.1", port)) else { return };
    let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut c2, &mut s2);
        let _ = s2.shutdown(std::net::Shutdown::Write);
    });
    // A record header is 5 bytes (type, version, length); `left` bytes of body follow.
    let (mut hdr, mut have, mut left, mut records) = ([0u8; 5], 0usize, 0usize, 0usize);
    let mut flip_at: Option<usize> = None;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match server.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for b in &mut buf[..n] {
            if left == 0 {
                hdr[have] = *b;
                have += 1;
                if have == 5 {
                    have = 0;
                    left = u16::from_be_bytes([hdr[3], hdr[4]]) as usize;
                    if hdr[0] == 23 {
                        records += 1;
                        if records == nth {
                            flip_at = Some(left / 2);
                        }
                    }
                }
            } else {
                left -= 1;
                if flip_at == Some(left) {
                    *b ^= 0x01;
                    flip_at = None;
                }
            }
        }
        if client.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = client.shutdown(std::net::Shutdown::Both);
    let _ = up.join();
}

impl Download {
    /// The download failed, and curl sent the server a bad_record_mac alert (its `-v` log
    /// shows the alerts it sends before they are encrypted).
    pub fn failed_on_mac(&self) -> bool {
        !self.ok && self.curl_log.contains("(OUT), TLS alert, bad record mac")
    }
}

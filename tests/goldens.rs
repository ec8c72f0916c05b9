//! Every generated file equals its golden copy; a change shows up as a unified diff.
//! Bless with `kgen goldens --bless` (`cargo run --release -- goldens --bless`).

#[test]
fn goldens_match() {
    let dir = kgen_harness::oracle::repo_root().join("goldens");
    if let Err(e) = kgen::goldens::run(kgen_kernels::kernels(), &dir, false) {
        panic!("{e}");
    }
}

#[test]
fn a_changed_golden_is_reported_as_a_diff() {
    // Negative control: copy the goldens, change one line of one file, compare.
    let src = kgen_harness::oracle::repo_root().join("goldens");
    let dir = kgen_harness::oracle::scratch("goldens_negative");
    copy(&src, &dir);
    let victim = dir.join("aes/c906/openssl/aes-c906.S");
    let text = std::fs::read_to_string(&victim).unwrap();
    std::fs::write(&victim, text.replacen("th.lrwu", "th.lrw", 1)).unwrap();
    let e = kgen::goldens::run(kgen_kernels::kernels(), &dir, false).unwrap_err();
    assert!(e.contains("-\tth.lrw") && e.contains("+\tth.lrwu"), "{e}");
    assert!(e.contains("@@"), "unified diff expected: {e}");
}

fn copy(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn generation_is_deterministic_and_path_free() {
    for o in kgen::outputs::all(kgen_kernels::kernels()) {
        let a = o.render(kgen_emit::Compat::Binutils244).unwrap();
        let b = o.render(kgen_emit::Compat::Binutils244).unwrap();
        assert_eq!(a, b, "{}", o.command(kgen_emit::Compat::Binutils244));
        for (_, bytes) in &a {
            let text = String::from_utf8_lossy(bytes);
            assert!(!text.contains("/work/") && !text.contains("/home/") && !text.contains("/tmp/"), "absolute path in output");
        }
    }
}

/// `kgen goldens` run from any directory compares the goldens of the project it was built
/// from; `--bless --dir NEW` makes a goldens tree there, which then compares clean, and a
/// change in it is found (the control).
#[test]
fn goldens_found_from_anywhere_and_blessed_into_a_new_tree() {
    let kgen = env!("CARGO_BIN_EXE_kgen");
    let elsewhere = kgen_harness::oracle::scratch("goldens_elsewhere");
    let o = std::process::Command::new(kgen).arg("goldens").current_dir(&elsewhere).output().unwrap();
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("golden files match"), "{}", String::from_utf8_lossy(&o.stderr));
    let fresh = elsewhere.join("fresh");
    let _ = std::fs::remove_dir_all(&fresh);
    let run = |bless: bool| {
        let mut c = std::process::Command::new(kgen);
        c.args(["goldens", "--dir", fresh.to_str().unwrap()]);
        if bless {
            c.arg("--bless");
        }
        c.output().unwrap()
    };
    assert!(run(true).status.success());
    assert!(kgen::goldens::is_goldens_tree(&fresh));
    assert!(run(false).status.success());
    let victim = fresh.join("sha256/c906/openssl/sha256-c906.h");
    std::fs::write(&victim, "changed\n").unwrap();
    let o = run(false);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sha256-c906.h"));
}

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

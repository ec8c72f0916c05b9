//! `kgen go-patches --base x-crypto-0.25.0 --out DIR`: a `git format-patch` series against
//! golang.org/x/crypto v0.25.0 as Debian ships it (`golang-golang-x-crypto-dev`, sources in
//! `/usr/share/gocode/src/golang.org/x/crypto`) that adds a riscv64 port, behind
//! `gc && !purego` build tags and the `_riscv64` file suffix as x/crypto's other ports:
//!
//! 1. `internal/riscv64cpu`: detection, once at init. `riscv_hwprobe` (through
//!    golang.org/x/sys/unix) for a T-Head core with the scalar extensions (mvendorid 0x5b7
//!    with a known marchid/mimpid pair) and for XTheadVector (key 11, bit 0). A kernel
//!    without the syscall (before Linux 6.4, as the vendor kernels of C906 boards and T-Head's
//!    QEMU) answers ENOSYS; there the `V` bit of AT_HWCAP can only mean T-Head's 0.7.1 vector
//!    (Linux learnt RVV 1.0 in 6.5, after riscv_hwprobe), so it counts as both. With the
//!    `kgen_trace` build tag the package counts which path each call took (the tests print
//!    it; without the tag the counting is compiled out).
//! 2. `chacha20`: `xorKeyStreamBlocks` on the kernel that fills the ChaCha20 slot: its
//!    first variant (XTheadVector lanes) where XTheadVector is usable, its second (T-Head
//!    scalar) where only the T-Head scalar extensions are, the generic Go code otherwise.
//! 3. `internal/poly1305`: `update` on the Poly1305 slot's blocks function for x/crypto's
//!    `macState`: the first variant (T-Head scalar) on T-Head cores, the second elsewhere.
//! 4. `chacha20poly1305`: seal/open of the whole 64-byte blocks on the ChaCha20-Poly1305
//!    slot's stitched kernel where XTheadVector is usable, in its form for x/crypto's
//!    `macState` (internal/poly1305 gains a riscv64-only `MAC.State` that gives the kernel
//!    the MAC's state); the Poly1305 key, AAD, tail and lengths through chacha20 and
//!    poly1305. Elsewhere sealGeneric and openGeneric, on chacha20 + poly1305.
//!
//! Which kernel fills which slot, with which variants and entry points, is the kernels'
//! own fact ([`kgen_dsl::kernel::hooks::XCrypto`]); the glue checks that each variant needs
//! what the CPU test before its call guarantees.
//!
//! The Go files are kgen's own; the `.s` files are kgen's Go output ([`kgen_emit::go::go_asm`]).
//! The series is deterministic: fixed author and dates, `--zero-commit`, no signature.

use kgen_dsl::kernel::hooks::{Hook, XCrypto, XCryptoSlot};
use kgen_dsl::kernel::Kernel;
use kgen_dsl::{Abi, Ext};
use kgen_emit::go::{go_asm, GoAsmSpec};
use crate::series::{check_edits, format, one_filler, Edit, Patch};
use std::path::{Path, PathBuf};

/// The bases kgen knows: name, where the sources are, and the build lines of the files the
/// series edits (each must be found as it is, or the base is not the one the series is for).
pub struct Base {
    pub name: &'static str,
    /// Where the sources are: an absolute path, or one under kgen's toolchain directory
    /// (`.toolchain`, where `scripts/setup-toolchain.sh` unpacks them).
    pub dir: &'static str,
    pub edits: &'static [Edit],
    /// What the Poly1305 patch says of upstream's own riscv64 code (empty where there is
    /// none).
    pub poly_upstream: &'static str,
}

impl Base {
    /// The sources' directory.
    pub fn path(&self) -> PathBuf {
        let p = Path::new(self.dir);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            kgen_harness::oracle::toolchain_dir().join(p)
        }
    }
}

/// golang.org/x/crypto v0.25.0, Debian `1:0.25.0-1~bpo12+1`.
pub const X_CRYPTO_0_25_0: Base = Base {
    name: "x-crypto-0.25.0",
    dir: "/usr/share/gocode/src/golang.org/x/crypto",
    edits: &[
        ("chacha20/chacha_noasm.go", "//go:build (!arm64 && !s390x && !ppc64le) || !gc || purego", "//go:build (!arm64 && !s390x && !ppc64le && !riscv64) || !gc || purego"),
        ("internal/poly1305/mac_noasm.go", "//go:build (!amd64 && !ppc64le && !s390x) || !gc || purego", "//go:build (!amd64 && !ppc64le && !riscv64 && !s390x) || !gc || purego"),
        ("chacha20poly1305/chacha20poly1305_noasm.go", "//go:build !amd64 || !gc || purego", "//go:build (!amd64 && !riscv64) || !gc || purego"),
    ],
    poly_upstream: "",
};

/// golang.org/x/crypto v0.58.0, Debian sid's `1:0.58.0-1` (which needs Go 1.26 or later).
/// Since v0.55.0 x/crypto has riscv64 assembly for Poly1305 (base 2^64, `MUL`/`MULHU`);
/// the series replaces it: on kgen's C906 model it takes 6.32 cycles per byte at 16 KiB
/// against 2.76 for 32-c906 and 4.38 for 32-rv64gc, and its 64-bit multiplies of the
/// secret state take the C906's slow path or not by their values
/// (`tests/poly1305_baseline.rs` measures both).
pub const X_CRYPTO_0_58_0: Base = Base {
    name: "x-crypto-0.58.0",
    dir: "x-crypto-0.58.0/usr/share/gocode/src/golang.org/x/crypto",
    edits: &[
        ("chacha20/chacha_noasm.go", "//go:build (!arm64 && !loong64 && !s390x && !ppc64 && !ppc64le) || !gc || purego", "//go:build (!arm64 && !loong64 && !riscv64 && !s390x && !ppc64 && !ppc64le) || !gc || purego"),
        ("internal/poly1305/sum_asm.go", "//go:build gc && !purego && (amd64 || loong64 || ppc64 || ppc64le || riscv64)", "//go:build gc && !purego && (amd64 || loong64 || ppc64 || ppc64le)"),
        ("chacha20poly1305/chacha20poly1305_noasm.go", "//go:build !amd64 || !gc || purego", "//go:build (!amd64 && !riscv64) || !gc || purego"),
    ],
    poly_upstream: "It replaces x/crypto's own riscv64 assembly (sum_riscv64.s, base 2^64\nwith MUL/MULHU; sum_asm.go no longer covers riscv64): on kgen's C906\nmodel that code takes 6.32 cycles per byte at 16 KiB against 2.76 for\n32-c906 and 4.38 for 32-rv64gc, and its 64-bit multiplies of the secret\nstate take the C906's 3- or 6-cycle path by their values.",
};

pub const BASES: &[&Base] = &[&X_CRYPTO_0_25_0, &X_CRYPTO_0_58_0];

/// The command that regenerates the series (named in every generated file).
pub fn command(base: &str) -> String {
    format!("kgen go-patches --base {base} --out DIR")
}

fn generated_header(base: &str, what: &str) -> Vec<String> {
    vec!["Regenerate with:".into(), format!("  {}", command(base)), what.into()]
}

const CPU_GO: &str = r#"// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

// Package riscv64cpu tells the riscv64 assembly of x/crypto which kgen kernels the CPU
// runs. It is decided once, at init. On other architectures every answer is false.
package riscv64cpu

// HasTHeadScalar is true on a T-Head core with the XTheadBa, XTheadBb, XTheadBs and
// XTheadMac extensions (C906, C910).
var HasTHeadScalar bool

// HasXTheadVector is true where T-Head's vector extension (RVV 0.7.1) can be used.
var HasXTheadVector bool

// Path is a kernel a package's assembly can take (or its generic Go code).
type Path int

const (
	ChaCha20C906 Path = iota
	ChaCha20C906Novector
	ChaCha20Generic
	Poly1305C906
	Poly1305RV64GC
	ChaCha20Poly1305C906
	ChaCha20Poly1305Composed
	numPaths
)

var pathNames = [numPaths]string{PATH_NAMES}
"#;

const TRACE_GO: &str = r#"//go:build kgen_trace

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package riscv64cpu

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// Trace is true with the kgen_trace build tag: Count records each call's path.
const Trace = true

var calls [numPaths]atomic.Uint64

// Count records one call on path p.
func Count(p Path) { calls[p].Add(1) }

// Report is one line: the detected features and the calls on each path.
func Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kgen-trace: thead-scalar=%v xtheadvector=%v", HasTHeadScalar, HasXTheadVector)
	for p := Path(0); p < numPaths; p++ {
		fmt.Fprintf(&b, " %s=%d", pathNames[p], calls[p].Load())
	}
	return b.String()
}
"#;

const NOTRACE_GO: &str = r#"//go:build !kgen_trace

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package riscv64cpu

// Trace is false without the kgen_trace build tag, and the counting is compiled out.
const Trace = false

// Count does nothing without the kgen_trace build tag.
func Count(Path) {}
"#;

const CPU_RISCV64_GO: &str = r#"//go:build !purego

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package riscv64cpu

import (
	"encoding/binary"
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

const (
	// mvendorid of T-Head (JEDEC bank 12, 0x37).
	theadVendor = 0x5b7
	// RISCV_HWPROBE_KEY_VENDOR_EXT_THEAD_0 (Linux 6.14) and its XTheadVector bit.
	keyVendorExtThead0 = 11
	extXTheadVector    = 1 << 0
	// AT_HWCAP and its bit for 'V'.
	atHWCAP = 16
	hwcapV  = 1 << ('V' - 'A')
)

// theadCores are the (marchid, mimpid) pairs of T-Head cores known to have XTheadBa,
// XTheadBb, XTheadBs and XTheadMac: C906 and C910 report 0, 0.
var theadCores = [][2]uint64{{0, 0}}

func init() {
	pairs := []unix.RISCVHWProbePairs{
		{Key: unix.RISCV_HWPROBE_KEY_MVENDORID},
		{Key: unix.RISCV_HWPROBE_KEY_MARCHID},
		{Key: unix.RISCV_HWPROBE_KEY_MIMPID},
		{Key: keyVendorExtThead0},
	}
	err := unix.RISCVHWProbe(pairs, nil, 0)
	if errors.Is(err, unix.ENOSYS) {
		// No riscv_hwprobe: a kernel before 6.4. 'V' there is T-Head's vector.
		HasXTheadVector = hwcap()&hwcapV != 0
		HasTHeadScalar = HasXTheadVector
		return
	}
	if err != nil || pairs[0].Key != unix.RISCV_HWPROBE_KEY_MVENDORID || pairs[0].Value != theadVendor {
		return
	}
	for _, c := range theadCores {
		if pairs[1].Key == unix.RISCV_HWPROBE_KEY_MARCHID && pairs[1].Value == c[0] && pairs[2].Key == unix.RISCV_HWPROBE_KEY_MIMPID && pairs[2].Value == c[1] {
			HasTHeadScalar = true
		}
	}
	// A kernel that does not know key 11 sets it to -1.
	HasXTheadVector = HasTHeadScalar && pairs[3].Key == keyVendorExtThead0 && pairs[3].Value&extXTheadVector != 0
}

// hwcap is AT_HWCAP from /proc/self/auxv (0 if it cannot be read).
func hwcap() uint64 {
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return 0
	}
	for ; len(b) >= 16; b = b[16:] {
		if binary.LittleEndian.Uint64(b) == atHWCAP {
			return binary.LittleEndian.Uint64(b[8:])
		}
	}
	return 0
}
"#;

const TRACE_TEST_GO: &str = r#"//go:build kgen_trace

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package PKG

import (
	"fmt"
	"os"
	"testing"

	"golang.org/x/crypto/internal/riscv64cpu"
)

// TestMain prints which kernels the package's tests ran on (kgen's tests read the line).
func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Println(riscv64cpu.Report())
	os.Exit(code)
}
"#;

const CHACHA_GO: &str = r#"//go:build gc && !purego

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package chacha20

import "golang.org/x/crypto/internal/riscv64cpu"

const bufSize = 256

func (c *Cipher) xorKeyStreamBlocks(dst, src []byte) {
	// The kernels read the counter and the nonce as four words from &c.counter (OpenSSL's
	// ChaCha20_ctr32 counter block) and do not write it back.
	switch {
	case riscv64cpu.HasXTheadVector:
		if riscv64cpu.Trace {
			riscv64cpu.Count(riscv64cpu.ChaCha20C906)
		}
		LANES(&dst[0], &src[0], uint64(len(src)), &c.key[0], &c.counter)
	case riscv64cpu.HasTHeadScalar:
		if riscv64cpu.Trace {
			riscv64cpu.Count(riscv64cpu.ChaCha20C906Novector)
		}
		NOVECTOR(&dst[0], &src[0], uint64(len(src)), &c.key[0], &c.counter)
	default:
		if riscv64cpu.Trace {
			riscv64cpu.Count(riscv64cpu.ChaCha20Generic)
		}
		c.xorKeyStreamBlocksGeneric(dst, src)
		return
	}
	c.counter += uint32(len(src) / blockSize)
}
DECLS"#;

const POLY_GO: &str = r#"//go:build gc && !purego

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package poly1305

import "golang.org/x/crypto/internal/riscv64cpu"

// update absorbs msg into state: each whole 16-byte block with the 2^128 bit, then a
// shorter tail as a last block with a 0x01 byte after it and no 2^128 bit.
func update(state *macState, msg []byte) {
	whole := len(msg) &^ (TagSize - 1)
	if whole > 0 {
		blocks(state, msg[:whole], 1)
	}
	if tail := msg[whole:]; len(tail) > 0 {
		var last [TagSize]byte
		copy(last[:], tail)
		last[len(tail)] = 1
		blocks(state, last[:], 0)
	}
}

func blocks(state *macState, msg []byte, padbit uint32) {
	if riscv64cpu.HasTHeadScalar {
		if riscv64cpu.Trace {
			riscv64cpu.Count(riscv64cpu.Poly1305C906)
		}
		BLOCKS_C906(state, &msg[0], uint64(len(msg)), padbit)
		return
	}
	if riscv64cpu.Trace {
		riscv64cpu.Count(riscv64cpu.Poly1305RV64GC)
	}
	BLOCKS_RV64GC(state, &msg[0], uint64(len(msg)), padbit)
}

// mac is macGeneric with its blocks hashed by update.
type mac struct{ macGeneric }

func (h *mac) Write(p []byte) (int, error) {
	n := len(p)
	if h.offset > 0 {
		k := copy(h.buffer[h.offset:], p)
		h.offset += k
		p = p[k:]
		if h.offset < TagSize {
			return n, nil
		}
		update(&h.macState, h.buffer[:])
		h.offset = 0
	}
	whole := len(p) &^ (TagSize - 1)
	if whole > 0 {
		update(&h.macState, p[:whole])
	}
	h.offset = copy(h.buffer[:], p[whole:])
	return n, nil
}

func (h *mac) Sum(out *[16]byte) {
	state := h.macState
	if h.offset > 0 {
		update(&state, h.buffer[:h.offset])
	}
	finalize(out, &state.h, &state.s)
}
DECLS"#;

const AEAD_GO: &str = r#"//go:build gc && !purego

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package chacha20poly1305

import (
	"encoding/binary"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/internal/alias"
	"golang.org/x/crypto/internal/poly1305"
	"golang.org/x/crypto/internal/riscv64cpu"
)

// Where XTheadVector is usable, seal and open put the whole 64-byte blocks of the text
// through kgen's stitched kernel (ChaCha20 in vector lanes, Poly1305 on the scalar core,
// one pass), whose Poly1305 continues the MAC's own state. The Poly1305 key, the
// additional data, the last partial block and the lengths go through chacha20 and
// poly1305 as in sealGeneric and openGeneric. Elsewhere seal and open are sealGeneric and
// openGeneric, on chacha20 and poly1305 (which have riscv64 assembly of their own).

// stitchedBlock is the unit of the stitched kernel: a ChaCha20 block.
const stitchedBlock = 64

// stitchedState writes the key and the counter block (counter 1, then the nonce) as
// little-endian words, as the stitched kernel reads them.
func stitchedState(state *[12]uint32, key *[KeySize]byte, nonce []byte) {
	for i := 0; i < 8; i++ {
		state[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
	state[8] = 1
	state[9] = binary.LittleEndian.Uint32(nonce[0:4])
	state[10] = binary.LittleEndian.Uint32(nonce[4:8])
	state[11] = binary.LittleEndian.Uint32(nonce[8:12])
}

func (c *chacha20poly1305) seal(dst, nonce, plaintext, additionalData []byte) []byte {
	if !riscv64cpu.HasXTheadVector {
		if riscv64cpu.Trace {
			riscv64cpu.Count(riscv64cpu.ChaCha20Poly1305Composed)
		}
		return c.sealGeneric(dst, nonce, plaintext, additionalData)
	}

	ret, out := sliceForAppend(dst, len(plaintext)+poly1305.TagSize)
	ciphertext, tag := out[:len(plaintext)], out[len(plaintext):]
	if alias.InexactOverlap(out, plaintext) {
		panic("chacha20poly1305: invalid buffer overlap")
	}

	var polyKey [32]byte
	s, _ := chacha20.NewUnauthenticatedCipher(c.key[:], nonce)
	s.XORKeyStream(polyKey[:], polyKey[:])
	p := poly1305.New(&polyKey)
	writeWithPadding(p, additionalData)

	bulk := len(plaintext) &^ (stitchedBlock - 1)
	if bulk > 0 {
		if riscv64cpu.Trace {
			riscv64cpu.Count(riscv64cpu.ChaCha20Poly1305C906)
		}
		var state [12]uint32
		stitchedState(&state, &c.key, nonce)
		SEAL(&ciphertext[0], &plaintext[0], uint64(bulk), &state[0], &state[8], p.State())
	}
	s.SetCounter(1 + uint32(bulk/stitchedBlock))
	s.XORKeyStream(ciphertext[bulk:], plaintext[bulk:])
	writeWithPadding(p, ciphertext[bulk:])
	writeUint64(p, len(additionalData))
	writeUint64(p, len(plaintext))
	p.Sum(tag[:0])

	return ret
}

func (c *chacha20poly1305) open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error) {
	if !riscv64cpu.HasXTheadVector {
		if riscv64cpu.Trace {
			riscv64cpu.Count(riscv64cpu.ChaCha20Poly1305Composed)
		}
		return c.openGeneric(dst, nonce, ciphertext, additionalData)
	}

	tag := ciphertext[len(ciphertext)-16:]
	ciphertext = ciphertext[:len(ciphertext)-16]
	ret, out := sliceForAppend(dst, len(ciphertext))
	if alias.InexactOverlap(out, ciphertext) {
		panic("chacha20poly1305: invalid buffer overlap")
	}

	var polyKey [32]byte
	s, _ := chacha20.NewUnauthenticatedCipher(c.key[:], nonce)
	s.XORKeyStream(polyKey[:], polyKey[:])
	p := poly1305.New(&polyKey)
	writeWithPadding(p, additionalData)

	// The kernel hashes each block of the ciphertext before it writes the plaintext there
	// (out may be ciphertext itself), so the whole blocks are decrypted before the tag is
	// checked, as chacha20Poly1305Open does on amd64, and wiped if it does not match.
	bulk := len(ciphertext) &^ (stitchedBlock - 1)
	if bulk > 0 {
		if riscv64cpu.Trace {
			riscv64cpu.Count(riscv64cpu.ChaCha20Poly1305C906)
		}
		var state [12]uint32
		stitchedState(&state, &c.key, nonce)
		OPEN(&out[0], &ciphertext[0], uint64(bulk), &state[0], &state[8], p.State())
	}
	writeWithPadding(p, ciphertext[bulk:])
	writeUint64(p, len(additionalData))
	writeUint64(p, len(ciphertext))

	if !p.Verify(tag) {
		for i := range out {
			out[i] = 0
		}
		return nil, errOpen
	}

	s.SetCounter(1 + uint32(bulk/stitchedBlock))
	s.XORKeyStream(out[bulk:], ciphertext[bulk:])
	return ret, nil
}
DECLS"#;

const POLY_STATE_GO: &str = r#"//go:build gc && !purego

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package poly1305

// State is the address of the MAC's macState (h, r and s, as in sum_generic.go) for
// chacha20poly1305's riscv64 assembly, which absorbs whole 16-byte blocks into h itself
// (with the 2^128 bit; it reads r and never writes r or s). Nothing may be buffered: it
// panics if the bytes written so far are not whole blocks, or after Sum or Verify.
func (h *MAC) State() *uint64 {
	if h.finalized {
		panic("poly1305: State after Sum or Verify")
	}
	if h.offset != 0 {
		panic("poly1305: State with a partial block buffered")
	}
	return &h.macState.h[0]
}
"#;

/// A kernel filling one slot of the series, with its variants' modules (Go ABI).
struct Filled {
    kernel: &'static Kernel,
    hook: &'static XCrypto,
    modules: Vec<kgen_dsl::Module>,
}

impl Filled {
    fn variant(&self, i: usize) -> &'static str {
        self.hook.variants[i]
    }
    /// The symbol of entry `e` (the hook's `k`th) of variant `i`.
    fn symbol(&self, k: usize, i: usize) -> String {
        self.hook.entries[k].symbol(self.variant(i))
    }
}

/// What a variant needs of the CPU, as the Go glue tests it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Needs {
    /// riscv64cpu.HasXTheadVector
    XTheadVector,
    /// riscv64cpu.HasTHeadScalar
    TheadScalar,
    /// Any riscv64 core.
    Rv64gc,
}

/// The kernel filling `slot`, its variants checked against what the slot's Go glue tests
/// for each (`roles`, in dispatch order), and their modules built.
fn filled(kernels: &[&'static Kernel], slot: XCryptoSlot, roles: &[Needs], entries: usize) -> Result<Filled, String> {
    let (kernel, hook) = one_filler(
        kernels,
        |h| match h {
            Hook::XCrypto(x) if x.slot == slot => Some(x),
            _ => None,
        },
        &format!("x/crypto's {slot:?}"),
    )?;
    if hook.variants.len() != roles.len() || hook.entries.len() != entries {
        return Err(format!(
            "go-patches: the {slot:?} slot takes {} variant(s) and {entries} entry point(s); kernel `{}` names {} and {}",
            roles.len(),
            kernel.name,
            hook.variants.len(),
            hook.entries.len()
        ));
    }
    let mut modules = Vec::new();
    for (v, &role) in hook.variants.iter().zip(roles) {
        let var = kernel.variant(v).ok_or_else(|| format!("go-patches: kernel `{}` has no variant `{v}`", kernel.name))?;
        let m = match hook.module {
            None => Some(var.build(Abi::Go)),
            Some(f) => f(v).transpose(),
        }
        .ok_or_else(|| format!("go-patches: {} {v} has no module for x/crypto", kernel.name))?
        .map_err(|e| format!("go-patches: {} {v}: {e}", kernel.name))?;
        if m.declares_leaks() {
            return Err(format!("go-patches: {} {v} declares a leak; the x/crypto series takes only constant-time code", kernel.name));
        }
        let used = m.exts_used();
        let needs = if used.contains(&Ext::XTheadVector) {
            Needs::XTheadVector
        } else if used.iter().any(|e| e.name().starts_with("xthead")) {
            Needs::TheadScalar
        } else if used.is_empty() {
            Needs::Rv64gc
        } else {
            return Err(format!("go-patches: {} {v} uses {}, which the x/crypto glue does not test for", kernel.name, used.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")));
        };
        if needs != role {
            return Err(format!("go-patches: {} {v} needs {needs:?}; the {slot:?} slot's glue calls this variant where the CPU has {role:?}", kernel.name));
        }
        modules.push(m);
    }
    Ok(Filled { kernel, hook, modules })
}

fn go_name(sym: &str) -> Result<String, String> {
    kgen_emit::go::go_name(sym).map_err(|e| format!("go-patches: {e}"))
}

/// The patches of the series for `base`, from the x/crypto hooks of `kernels`.
fn patches(base: &Base, kernels: &[&'static Kernel]) -> Result<Vec<Patch>, String> {
    let regen = command(base.name);
    let chacha = filled(kernels, XCryptoSlot::ChaCha20, &[Needs::XTheadVector, Needs::TheadScalar], 1)?;
    let poly = filled(kernels, XCryptoSlot::Poly1305, &[Needs::TheadScalar, Needs::Rv64gc], 1)?;
    let aead = filled(kernels, XCryptoSlot::ChaCha20Poly1305, &[Needs::XTheadVector], 2)?;
    let path = |pkg: &str, v: &str| format!("\"{pkg}.{v}\"");
    let path_names = [
        path("chacha20", chacha.variant(0)),
        path("chacha20", chacha.variant(1)),
        path("chacha20", "generic"),
        path("poly1305", poly.variant(0)),
        path("poly1305", poly.variant(1)),
        path("chacha20poly1305", aead.variant(0)),
        path("chacha20poly1305", "composed"),
    ]
    .join(", ");
    let sub = |t: &str| {
        let text = t.replace("REGEN", &regen).replace("Code generated by kgen;", &format!("Code generated by {};", kgen_emit::GENERATOR));
        format!("// SPDX-License-Identifier: {}\n{text}", kgen_emit::spdx(Abi::Go))
    };
    let mut out = Vec::new();

    out.push(Patch {
        subject: "internal/riscv64cpu: detect the T-Head extensions kgen's riscv64 kernels use".into(),
        body: "riscv_hwprobe, once at init: a T-Head core (mvendorid 0x5b7, a known\nmarchid/mimpid) has XTheadBa/Bb/Bs/Mac; key 11 bit 0 says XTheadVector.\nWithout the syscall (ENOSYS, kernels before 6.4) the V bit of AT_HWCAP\ncan only be T-Head's 0.7.1 vector. The kgen_trace build tag counts the\npath of each call for tests.".into(),
        files: vec![
            ("internal/riscv64cpu/cpu.go".into(), sub(CPU_GO).replace("PATH_NAMES", &path_names)),
            ("internal/riscv64cpu/cpu_riscv64.go".into(), sub(CPU_RISCV64_GO)),
            ("internal/riscv64cpu/trace.go".into(), sub(TRACE_GO)),
            ("internal/riscv64cpu/notrace.go".into(), sub(NOTRACE_GO)),
        ],
        edits: vec![],
    });

    // chacha20
    let (k, v0, v1) = (chacha.kernel.name, chacha.variant(0), chacha.variant(1));
    let spec = GoAsmSpec {
        parts: vec![(&chacha.modules[0], vec![chacha.symbol(0, 0)]), (&chacha.modules[1], vec![chacha.symbol(0, 1)])],
        preamble: vec![],
        build: "gc && !purego".into(),
        header: generated_header(base.name, &format!("Kernels: {k} {v0} (XTheadVector lanes), {k} {v1} (T-Head scalar).")),
    };
    let a = go_asm(&spec).map_err(|e| format!("go-patches: chacha20: {e}"))?;
    let go = sub(CHACHA_GO).replace("LANES", &go_name(&chacha.symbol(0, 0))?).replace("NOVECTOR", &go_name(&chacha.symbol(0, 1))?).replace("DECLS", &a.decls);
    out.push(Patch {
        subject: "chacha20: riscv64 assembly from kgen (T-Head C906)".into(),
        body: "xorKeyStreamBlocks runs kgen's c906 kernel (XTheadVector lanes) where\nXTheadVector is usable, c906-novector where only the T-Head scalar\nextensions are, and the generic code otherwise.".into(),
        files: vec![
            ("chacha20/chacha_riscv64.go".into(), go),
            ("chacha20/chacha_riscv64.s".into(), a.s),
            ("chacha20/kgen_trace_riscv64_test.go".into(), sub(TRACE_TEST_GO).replace("PKG", "chacha20")),
        ],
        edits: vec![0],
    });

    // internal/poly1305
    let (k, v0, v1) = (poly.kernel.name, poly.variant(0), poly.variant(1));
    let spec = GoAsmSpec {
        parts: vec![(&poly.modules[0], vec![poly.symbol(0, 0)]), (&poly.modules[1], vec![poly.symbol(0, 1)])],
        preamble: vec![],
        build: "gc && !purego".into(),
        header: generated_header(base.name, &format!("Kernels: {k} {v0} (T-Head scalar), {k} {v1}, on x/crypto's macState.")),
    };
    let a = go_asm(&spec).map_err(|e| format!("go-patches: poly1305: {e}"))?;
    let go = sub(POLY_GO).replace("BLOCKS_C906", &go_name(&poly.symbol(0, 0))?).replace("BLOCKS_RV64GC", &go_name(&poly.symbol(0, 1))?).replace("DECLS", &a.decls);
    out.push(Patch {
        subject: "internal/poly1305: riscv64 assembly from kgen (constant-time base 2^32)".into(),
        body: {
            let b = "update runs kgen's base-2^32 blocks function on macState: every\nmultiply has both operands below 2^32, so the C906's multiplier time\ndoes not depend on the data. 32-c906 (th.mula, th.extu) on T-Head\ncores, 32-rv64gc elsewhere.";
            if base.poly_upstream.is_empty() { b.to_string() } else { format!("{b}\n\n{}", base.poly_upstream) }
        },
        files: vec![
            ("internal/poly1305/sum_riscv64.go".into(), go),
            ("internal/poly1305/sum_riscv64.s".into(), a.s),
            ("internal/poly1305/kgen_trace_riscv64_test.go".into(), sub(TRACE_TEST_GO).replace("PKG", "poly1305")),
        ],
        edits: vec![1],
    });

    // chacha20poly1305
    let (seal, open) = (aead.symbol(0, 0), aead.symbol(1, 0));
    let spec = GoAsmSpec {
        parts: vec![(&aead.modules[0], vec![seal.clone(), open.clone()])],
        preamble: vec![],
        build: "gc && !purego".into(),
        header: generated_header(
            base.name,
            &format!("Kernel: {} {} (ChaCha20 in XTheadVector lanes stitched with scalar Poly1305), on x/crypto's macState.", aead.kernel.name, aead.variant(0)),
        ),
    };
    let a = go_asm(&spec).map_err(|e| format!("go-patches: chacha20poly1305: {e}"))?;
    let go = sub(AEAD_GO).replace("SEAL", &go_name(&seal)?).replace("OPEN", &go_name(&open)?).replace("DECLS", &a.decls);
    out.push(Patch {
        subject: "chacha20poly1305: riscv64 seal/open on kgen's stitched kernel (T-Head C906)".into(),
        body: "Where XTheadVector is usable, seal and open put the whole 64-byte blocks\nof each call through kgen's chacha20-poly1305 c906 kernel: ChaCha20 in\nvector lanes and Poly1305 on the scalar core in one pass. Its Poly1305\ncontinues internal/poly1305's macState (s computed from r; x/crypto's s\nis not touched), reached through a riscv64-only MAC.State. The Poly1305\nkey, the additional data, the last partial block and the lengths go\nthrough chacha20 and poly1305 as in sealGeneric and openGeneric; open\ncompares the tag in constant time (MAC.Verify) and wipes the output if\nit does not match. Elsewhere (c906-novector cores, other riscv64 cores)\nseal and open are sealGeneric and openGeneric on the riscv64 chacha20\nand poly1305 above.".into(),
        files: vec![
            ("chacha20poly1305/chacha20poly1305_riscv64.go".into(), go),
            ("chacha20poly1305/chacha20poly1305_riscv64.s".into(), a.s),
            ("chacha20poly1305/kgen_trace_riscv64_test.go".into(), sub(TRACE_TEST_GO).replace("PKG", "chacha20poly1305")),
            ("internal/poly1305/state_riscv64.go".into(), sub(POLY_STATE_GO)),
        ],
        edits: vec![2],
    });
    Ok(out)
}

/// The files the series adds (path in x/crypto, contents): kgen's own text, without the
/// base's (what `goldens/go-patches/<base>/` keeps; the edits of the base's build lines are
/// not among them).
pub fn added_files(name: &str, kernels: &[&'static Kernel]) -> Result<Vec<(String, String)>, String> {
    let base = BASES.iter().find(|b| b.name == name).ok_or_else(|| format!("go-patches: unknown base `{name}`"))?;
    Ok(patches(base, kernels)?.into_iter().flat_map(|p| p.files).collect())
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("go-patches: {}: {e}", to.display()))?;
    for e in std::fs::read_dir(from).map_err(|e| format!("go-patches: {}: {e}", from.display()))? {
        let e = e.map_err(|e| format!("go-patches: {}: {e}", from.display()))?;
        let (p, q) = (e.path(), to.join(e.file_name()));
        if p.is_dir() {
            copy_tree(&p, &q)?;
        } else {
            std::fs::copy(&p, &q).map_err(|e| format!("go-patches: {}: {e}", p.display()))?;
        }
    }
    Ok(())
}

/// Writes the series for base `name` into `out` (created; `*.patch` files already there
/// are replaced). Returns the patch files written.
pub fn run(name: &str, out: &Path, kernels: &[&'static Kernel]) -> Result<Vec<PathBuf>, String> {
    let base = BASES.iter().find(|b| b.name == name).ok_or_else(|| {
        format!("go-patches: unknown base `{name}` (known: {})", BASES.iter().map(|b| b.name).collect::<Vec<_>>().join(", "))
    })?;
    let src = base.path();
    check_edits("go-patches", name, &src, base.edits)?;
    let series = patches(base, kernels)?;
    format("go-patches", name, &format!("golang.org/x/crypto as in {}", base.dir), |repo| copy_tree(&src, repo), base.edits, &series, &command(base.name), out)
}

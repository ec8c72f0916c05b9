//! `kgen go-patches --base go-1.27.4 --out DIR`: a `git format-patch` series against Go's
//! own tree (GOROOT, as Debian's golang-1.27-src ships it) that gives the standard library's
//! AES, CTR and GCM kgen's constant-time kernels on riscv64:
//!
//! 1. `internal/cpu`, `runtime`, `crypto/internal/fips140deps/cpu`: T-Head detection, once
//!    at start-up, as the x/crypto series does it: `riscv_hwprobe` for a T-Head core
//!    (mvendorid 0x5b7 with a known marchid/mimpid pair) and for XTheadVector (key 11,
//!    bit 0); without the syscall (kernels before 6.4) the `V` bit of AT_HWCAP, which the
//!    runtime now keeps for riscv64 as it does for arm64. `GODEBUG=cpu.theadscalar=off` and
//!    `cpu.xtheadvector=off` turn them off. `crypto/internal/kgen` counts, with the
//!    `kgen_trace` build tag, which kernel each call ran (printed at exit).
//! 2. `crypto/internal/fips140/aes`: the block cipher, CTR and the counter mode GCM uses on
//!    the kernel that fills the AES slot, in the first of its variants the CPU can run.
//!    CTR hands all the whole blocks of a call to the kernel at once.
//! 3. `crypto/internal/fips140/aes/gcm`: GCM on that counter mode and the GHASH slot's
//!    kernel (its `gcm_init` table in the GCM value).
//!
//! Which variant needs what of the CPU is read from the instructions each uses; a variant
//! using an extension the glue cannot test for is an error. Everything else is Go's own
//! code, and `purego` builds are unchanged.

use crate::series::{check_edits, format, one_filler, Edit, Patch};
use kgen_dsl::kernel::hooks::{GoStd, GoStdSlot, Hook};
use kgen_dsl::kernel::Kernel;
use kgen_dsl::{Abi, Ext, Module};
use kgen_emit::go::{go_asm, go_name, GoAsmSpec};
use std::path::{Path, PathBuf};

/// A Go release the series is for: its name, where its GOROOT's sources are (under kgen's
/// toolchain directory, or absolute), and the lines of its files the series edits.
pub struct Base {
    pub name: &'static str,
    pub dir: &'static str,
    pub edits: &'static [Edit],
}

const FIPSDEPS_CPU: &str = "src/crypto/internal/fips140deps/cpu/cpu.go";

/// Go 1.27.4, Debian's `golang-1.27-src` 1.27.4-1~bpo13+1 (trixie-backports).
pub const GO_1_27_4: Base = Base {
    name: "go-1.27.4",
    dir: "go-1.27/usr/share/go-1.27",
    edits: &[
        // 0..5: detection
        ("src/internal/cpu/cpu.go", "\tHasZvkt           bool // Vector Data-Independent Execution Latency", "\tHasZvkt           bool // Vector Data-Independent Execution Latency\n\tHasTHeadScalar    bool // T-Head C906/C910 scalar extensions (XTheadBa, Bb, Bs, CondMov, Mac, MemIdx, MemPair, Sync)\n\tHasXTheadVector   bool // T-Head's vector extension (RVV 0.7.1), usable"),
        ("src/internal/cpu/cpu_riscv64.go", "\t\t{Name: \"zvkt\", Feature: &RISCV64.HasZvkt},", "\t\t{Name: \"zvkt\", Feature: &RISCV64.HasZvkt},\n\t\t{Name: \"theadscalar\", Feature: &RISCV64.HasTHeadScalar},\n\t\t{Name: \"xtheadvector\", Feature: &RISCV64.HasXTheadVector},"),
        ("src/internal/cpu/cpu_riscv64_linux.go", "func osInit() {", "func osInit() {\n\ttheadInit()\n"),
        ("src/runtime/os_linux_noauxv.go", "//go:build linux && !arm && !arm64 && !loong64 && !mips && !mipsle && !mips64 && !mips64le && !s390x && !ppc64 && !ppc64le", "//go:build linux && !arm && !arm64 && !loong64 && !mips && !mipsle && !mips64 && !mips64le && !riscv64 && !s390x && !ppc64 && !ppc64le"),
        ("src/runtime/os_linux_riscv64.go", "\t\"internal/runtime/syscall/linux\"", "\t\"internal/cpu\"\n\t\"internal/runtime/syscall/linux\""),
        ("src/runtime/os_linux_riscv64.go", "type riscvHWProbePairs = struct {", "func archauxv(tag, val uintptr) {\n\tif tag == _AT_HWCAP {\n\t\tcpu.HWCap = uint(val)\n\t}\n}\n\ntype riscvHWProbePairs = struct {"),
        (FIPSDEPS_CPU, "\tRISCV64HasV = cpu.RISCV64.HasV", "\tRISCV64HasV            = cpu.RISCV64.HasV\n\tRISCV64HasZbb          = cpu.RISCV64.HasZbb\n\tRISCV64HasZbc          = cpu.RISCV64.HasZbc\n\tRISCV64HasTHeadScalar  = cpu.RISCV64.HasTHeadScalar\n\tRISCV64HasXTheadVector = cpu.RISCV64.HasXTheadVector"),
        // 7, 8: aes
        ("src/crypto/internal/fips140/aes/aes_noasm.go", "//go:build (!amd64 && !s390x && !ppc64 && !ppc64le && !arm64) || purego", "//go:build (!amd64 && !s390x && !ppc64 && !ppc64le && !arm64 && !riscv64) || purego"),
        ("src/crypto/internal/fips140/aes/ctr.go", "\tfor len(src) >= 8*BlockSize {", "\tif n := ctrBulk(&c.b, dst, src, ivlo, ivhi); n > 0 {\n\t\tsrc = src[n*BlockSize:]\n\t\tdst = dst[n*BlockSize:]\n\t\tivlo, ivhi = add128(ivlo, ivhi, uint64(n))\n\t}\n\tfor len(src) >= 8*BlockSize {"),
        // 9: gcm
        ("src/crypto/internal/fips140/aes/gcm/gcm_noasm.go", "//go:build (!amd64 && !s390x && !ppc64 && !ppc64le && !arm64) || purego", "//go:build (!amd64 && !s390x && !ppc64 && !ppc64le && !arm64 && !riscv64) || purego"),
        // 10..13: Go's riscv64 SHA-256 and SHA-512 block functions renamed blockRISCV64
        ("src/crypto/internal/fips140/sha256/sha256block_asm.go", "//go:build (386 || loong64 || riscv64) && !purego", "//go:build (386 || loong64) && !purego"),
        ("src/crypto/internal/fips140/sha256/sha256block_riscv64.s", "TEXT ·block(SB),0,$64-32", "TEXT ·blockRISCV64(SB),0,$64-32"),
        ("src/crypto/internal/fips140/sha512/sha512block_asm.go", "//go:build (loong64 || riscv64) && !purego", "//go:build loong64 && !purego"),
        ("src/crypto/internal/fips140/sha512/sha512block_riscv64.s", "TEXT ·block(SB),0,$128-32", "TEXT ·blockRISCV64(SB),0,$128-32"),
    ],
};

pub const BASES: &[&Base] = &[&GO_1_27_4];

impl Base {
    /// The GOROOT sources' directory.
    pub fn path(&self) -> PathBuf {
        let p = Path::new(self.dir);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            kgen_harness::oracle::toolchain_dir().join(p)
        }
    }
}

/// The command that regenerates the series (named in every generated file).
pub fn command(base: &str) -> String {
    format!("kgen go-patches --base {base} --out DIR")
}

/// The kernel filling a slot, and its variants with their modules and what each needs of
/// the CPU (a Go condition on `crypto/internal/fips140deps/cpu`).
struct Filled {
    kernel: &'static Kernel,
    hook: &'static GoStd,
    variants: Vec<(&'static str, Module, String)>,
}

impl Filled {
    /// The Go name of entry `k` (the hook's `k`th) of variant `i`.
    fn func(&self, k: usize, i: usize) -> Result<String, String> {
        go_name(&self.hook.entries[k].symbol(self.variants[i].0)).map_err(|e| format!("go-patches: {e}"))
    }
}

/// The Go condition under which a module's instructions can run.
fn needs(used: &std::collections::BTreeSet<Ext>) -> Result<String, Vec<&'static str>> {
    if used.contains(&Ext::XTheadVector) {
        return Ok("cpu.RISCV64HasXTheadVector".into());
    }
    let mut conds = Vec::new();
    let mut unknown = Vec::new();
    if used.iter().any(|e| e.name().starts_with("xthead")) {
        conds.push("cpu.RISCV64HasTHeadScalar");
    }
    for e in used.iter().filter(|e| !e.name().starts_with("xthead")) {
        match e {
            Ext::V => conds.push("cpu.RISCV64HasV"),
            Ext::Zbb => conds.push("cpu.RISCV64HasZbb"),
            Ext::Zbc => conds.push("cpu.RISCV64HasZbc"),
            e => unknown.push(e.name()),
        }
    }
    if !unknown.is_empty() {
        return Err(unknown);
    }
    Ok(if conds.is_empty() { "true".into() } else { conds.join(" && ") })
}

fn filled(kernels: &[&'static Kernel], slot: GoStdSlot, entries: usize) -> Result<Filled, String> {
    let (kernel, hook) = one_filler(
        kernels,
        |h| match h {
            Hook::GoStd(x) if x.slot == slot => Some(x),
            _ => None,
        },
        &format!("Go's {slot:?}"),
    )?;
    if hook.entries.len() != entries || hook.variants.is_empty() {
        return Err(format!(
            "go-patches: Go's {slot:?} slot takes {entries} entry points and some variants; kernel `{}` names {} and {}",
            kernel.name,
            hook.entries.len(),
            hook.variants.len()
        ));
    }
    let mut variants = Vec::new();
    for &v in hook.variants {
        let var = kernel.variant(v).ok_or_else(|| format!("go-patches: kernel `{}` has no variant `{v}`", kernel.name))?;
        let m = var.build(Abi::Go).map_err(|e| format!("go-patches: {} {v}: {e}", kernel.name))?;
        if m.declares_leaks() {
            return Err(format!("go-patches: {} {v} declares a leak; Go's series takes only constant-time code", kernel.name));
        }
        let cond =
            needs(&m.exts_used()).map_err(|u| format!("go-patches: {} {v} uses {}, which Go's riscv64 glue does not test for", kernel.name, u.join(", ")))?;
        variants.push((v, m, cond));
    }
    Ok(Filled { kernel, hook, variants })
}

const KGEN_GO: &str = r#"// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

// Package kgen counts, in programs built with the kgen_trace tag, which of kgen's riscv64
// kernels the standard library's crypto ran; without the tag the counting is compiled out.
package kgen

// Path is a kernel variant a package's riscv64 code can call, or that package's own Go
// code.
type Path int

// The first path of each package's paths: its variants in dispatch order, then its Go code.
const (
@PATHS@)

var names = [numPaths]string{@NAMES@}
"#;

const KGEN_TRACE_GO: &str = r#"//go:build kgen_trace

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package kgen

import (
	"internal/runtime/exithook"
	"sync/atomic"
)

// Trace is true with the kgen_trace build tag: Count records each call's path.
const Trace = true

var calls [numPaths]atomic.Uint64

// Count records one call on path p.
func Count(p Path) { calls[p].Add(1) }

func init() {
	exithook.Add(exithook.Hook{F: report, RunOnFailure: true})
}

// report prints, at exit, one line on standard error: the calls on each path (kgen's tests
// read it).
func report() {
	print("kgen-trace:")
	for p := Path(0); p < numPaths; p++ {
		print(" ", names[p], "=", calls[p].Load())
	}
	print("\n")
}
"#;

const KGEN_NOTRACE_GO: &str = r#"//go:build !kgen_trace

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package kgen

// Trace is false without the kgen_trace build tag, and the counting is compiled out.
const Trace = false

// Count does nothing without the kgen_trace build tag.
func Count(Path) {}
"#;

const THEAD_GO: &str = r#"// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package cpu

// HWCap is AT_HWCAP, which the runtime sets from the auxiliary vector.
var HWCap uint

const (
	riscv_HWPROBE_KEY_MVENDORID           = 0x0
	riscv_HWPROBE_KEY_MARCHID             = 0x1
	riscv_HWPROBE_KEY_MIMPID              = 0x2
	riscv_HWPROBE_KEY_VENDOR_EXT_THEAD_0  = 0xb
	riscv_HWPROBE_VENDOR_EXT_XTHEADVECTOR = 1 << 0

	// mvendorid of T-Head (JEDEC bank 12, 0x37).
	theadVendor = 0x5b7
	// The bit of AT_HWCAP for 'V'.
	hwcapV = 1 << ('V' - 'A')
)

// theadCores are the (marchid, mimpid) pairs of T-Head cores with the scalar extensions
// kgen's kernels use: C906 and C910 report 0, 0.
var theadCores = [][2]uint64{{0, 0}}

// theadInit finds a T-Head core and its vector unit with riscv_hwprobe: mvendorid, marchid
// and mimpid, and key 11 (Linux 6.14) for XTheadVector. A kernel without riscv_hwprobe
// (before 6.4, as the vendor kernels of C906 boards) has no RVV 1.0 either (Linux 6.5), so
// there a V in AT_HWCAP can only be T-Head's vector.
func theadInit() {
	pairs := []riscvHWProbePairs{
		{riscv_HWPROBE_KEY_MVENDORID, 0},
		{riscv_HWPROBE_KEY_MARCHID, 0},
		{riscv_HWPROBE_KEY_MIMPID, 0},
		{riscv_HWPROBE_KEY_VENDOR_EXT_THEAD_0, 0},
	}
	if !riscvHWProbe(pairs, 0) {
		RISCV64.HasXTheadVector = isSet(HWCap, hwcapV)
		RISCV64.HasTHeadScalar = RISCV64.HasXTheadVector
		return
	}
	if pairs[0].key != riscv_HWPROBE_KEY_MVENDORID || pairs[0].value != theadVendor {
		return
	}
	for _, c := range theadCores {
		if pairs[1].key == riscv_HWPROBE_KEY_MARCHID && pairs[1].value == c[0] && pairs[2].key == riscv_HWPROBE_KEY_MIMPID && pairs[2].value == c[1] {
			RISCV64.HasTHeadScalar = true
		}
	}
	// A kernel that does not know key 11 sets it to -1.
	RISCV64.HasXTheadVector = RISCV64.HasTHeadScalar && pairs[3].key == riscv_HWPROBE_KEY_VENDOR_EXT_THEAD_0 && pairs[3].value&riscv_HWPROBE_VENDOR_EXT_XTHEADVECTOR != 0
}
"#;

const AES_GO: &str = r#"//go:build riscv64 && !purego

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package aes

import (
	"crypto/internal/fips140/subtle"
	"crypto/internal/fips140deps/byteorder"
	"crypto/internal/fips140deps/cpu"
	"crypto/internal/impl"
	"crypto/internal/kgen"
	"unsafe"
)

// On riscv64 the block cipher, CTR and GCM's counter mode run on kgen's constant-time
// @KERNEL@ kernel (no table lookups, no branches or addresses that depend on the key or the
// data), in the first of its variants the CPU can run:
//
@VARIANT_DOC@
//
// The kernels read OpenSSL's AES_KEY: 60 round-key words, then the number of rounds.

// kgenKey holds an AES_KEY, 8-byte aligned.
type kgenKey [31]uint64

func (k *kgenKey) ptr() *byte { return (*byte)(unsafe.Pointer(&k[0])) }

@SELECTION@

// checkGenericIsExpected is called by the variable-time implementation to make sure it is
// not used where kgen's runs.
func checkGenericIsExpected() {
	if supportsAES {
		panic("crypto/aes: internal error: using generic implementation despite hardware support")
	}
}

type block struct {
	blockExpanded
	kenc, kdec kgenKey
}

func newBlock(c *Block, key []byte) *Block {
	if !supportsAES {
		newBlockExpanded(&c.blockExpanded, key)
		return c
	}
	bits := int32(len(key) * 8)
	var e, d int32
	switch aesVariant {
@SETKEY@	}
	if e != 0 || d != 0 {
		panic("crypto/aes: internal error: key schedule failed")
	}
	return c
}

func encryptBlock(c *Block, dst, src []byte) {
	if !supportsAES {
		if kgen.Trace {
			kgen.Count(kgen.AESGeneric)
		}
		encryptBlockGeneric(&c.blockExpanded, dst, src)
		return
	}
	_, _ = src[BlockSize-1], dst[BlockSize-1]
	if kgen.Trace {
		kgen.Count(kgen.AES + kgen.Path(aesVariant))
	}
	switch aesVariant {
@ENCRYPT@	}
}

func decryptBlock(c *Block, dst, src []byte) {
	if !supportsAES {
		if kgen.Trace {
			kgen.Count(kgen.AESGeneric)
		}
		decryptBlockGeneric(&c.blockExpanded, dst, src)
		return
	}
	_, _ = src[BlockSize-1], dst[BlockSize-1]
	if kgen.Trace {
		kgen.Count(kgen.AES + kgen.Path(aesVariant))
	}
	switch aesVariant {
@DECRYPT@	}
}

// ctr32 runs n blocks of counter mode from iv, whose last four bytes are a big-endian
// counter incremented (mod 2^32) per block; iv is not updated.
func ctr32(b *Block, dst, src []byte, n int, iv *[BlockSize]byte) {
	_, _ = src[n*BlockSize-1], dst[n*BlockSize-1]
	if kgen.Trace {
		kgen.Count(kgen.CTR + kgen.Path(aesVariant))
	}
	switch aesVariant {
@CTR32@	}
}

// ctrBulk runs the whole blocks of src in counter mode from the 128-bit counter
// (ivhi, ivlo) and returns how many there were. The kernel increments the low 32 bits
// only, so a call stops where they wrap.
func ctrBulk(b *Block, dst, src []byte, ivlo, ivhi uint64) int {
	n := len(src) / BlockSize
	if !supportsAES || n == 0 {
		return 0
	}
	for done := 0; done < n; {
		m := n - done
		if room := 1<<32 - uint64(uint32(ivlo)); uint64(m) > room {
			m = int(room)
		}
		var iv [BlockSize]byte
		byteorder.BEPutUint64(iv[:8], ivhi)
		byteorder.BEPutUint64(iv[8:], ivlo)
		ctr32(b, dst[done*BlockSize:], src[done*BlockSize:], m, &iv)
		done += m
		ivlo, ivhi = add128(ivlo, ivhi, uint64(m))
	}
	return n
}

// CTR32 is GCM's counter mode on riscv64: the whole blocks of src, from iv, whose last four
// bytes are a big-endian counter incremented (mod 2^32) per block; iv is not updated.
func CTR32(b *Block, dst, src []byte, iv *[BlockSize]byte) {
	n := len(src) / BlockSize
	if n == 0 {
		return
	}
	if supportsAES {
		ctr32(b, dst, src, n, iv)
		return
	}
	if kgen.Trace {
		kgen.Count(kgen.CTRGeneric)
	}
	ctr := *iv
	var mask [BlockSize]byte
	for i := 0; i < n; i++ {
		encryptBlockGeneric(&b.blockExpanded, mask[:], ctr[:])
		subtle.XORBytes(dst[i*BlockSize:], src[i*BlockSize:(i+1)*BlockSize], mask[:])
		byteorder.BEPutUint32(ctr[12:], byteorder.BEUint32(ctr[12:])+1)
	}
}
@DECLS@"#;

const SHA_GO: &str = r#"//go:build riscv64 && !purego

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package @PKG@

import (
	"crypto/internal/fips140deps/cpu"
	"crypto/internal/impl"
	"crypto/internal/kgen"
)

// On riscv64 the block function is kgen's @KERNEL@ kernel where the CPU can run one of its
// variants (in this order):
//
@VARIANT_DOC@
//
// and Go's own riscv64 assembly (blockRISCV64) elsewhere. On the C906 kgen's runs faster
// than Go's (kgen's tests measure both on its C906 model).

@SELECTION@

//go:noescape
func blockRISCV64(dig *Digest, p []byte)

func block(dig *Digest, p []byte) {
	if !useKgen || len(p) < chunk {
		if kgen.Trace {
			kgen.Count(kgen.@GROUP@Generic)
		}
		blockRISCV64(dig, p)
		return
	}
	if kgen.Trace {
		kgen.Count(kgen.@GROUP@ + kgen.Path(kgenVariant))
	}
	switch kgenVariant {
@BLOCK@	}
}
@DECLS@"#;

const CTR_OTHER_GO: &str = r#"//go:build !riscv64 || purego

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package aes

// ctrBulk is where an architecture runs all the whole blocks of a CTR call at once; it
// returns how many it ran (none here).
func ctrBulk(b *Block, dst, src []byte, ivlo, ivhi uint64) int {
	return 0
}
"#;

const GCM_GO: &str = r#"//go:build riscv64 && !purego

// Code generated by kgen; DO NOT EDIT.
// Regenerate with:
//   REGEN

package gcm

import (
	"crypto/internal/fips140/aes"
	"crypto/internal/fips140/subtle"
	"crypto/internal/fips140deps/byteorder"
	"crypto/internal/fips140deps/cpu"
	"crypto/internal/impl"
	"crypto/internal/kgen"
	"unsafe"
)

// On riscv64 GCM runs on aes's constant-time counter mode (kgen's @AES_KERNEL@) and on kgen's
// constant-time @KERNEL@ kernel for GHASH, in the first of its variants the CPU can run:
//
@VARIANT_DOC@
//
// The GHASH kernels use OpenSSL's gcm_init table, kept in the GCM value.

@SELECTION@

func checkGenericIsExpected() {
	if supportsAESGCM {
		panic("gcm: internal error: using generic implementation despite hardware support")
	}
}

type gcmPlatformData struct {
	// htable is the GHASH kernel's table of H (256 bytes, 8-byte aligned).
	htable [32]uint64
}

// ghashState is GHASH's accumulator, the GCM byte string (8-byte aligned).
type ghashState [2]uint64

func (x *ghashState) bytes() *[gcmBlockSize]byte {
	return (*[gcmBlockSize]byte)(unsafe.Pointer(x))
}

func (g *GCM) table() *byte { return (*byte)(unsafe.Pointer(&g.htable[0])) }

func initGCM(g *GCM) {
	if !supportsAESGCM {
		return
	}
	var h [gcmBlockSize]byte
	aes.EncryptBlockInternal(&g.cipher, h[:], h[:])
	// gcm_init takes H as two 64-bit words in host order.
	H := [2]uint64{byteorder.BEUint64(h[:8]), byteorder.BEUint64(h[8:])}
	switch ghashVariant {
@INIT@	}
}

// ghashBlocks absorbs the whole blocks in blocks into x.
func ghashBlocks(g *GCM, x *ghashState, blocks []byte) {
	if kgen.Trace {
		kgen.Count(kgen.GHASH + kgen.Path(ghashVariant))
	}
	switch ghashVariant {
@GHASH@	}
}

// paddedGHASH absorbs data into x, its last partial block padded with zeros.
func paddedGHASH(g *GCM, x *ghashState, data []byte) {
	if whole := len(data) &^ (gcmBlockSize - 1); whole > 0 {
		ghashBlocks(g, x, data[:whole])
		data = data[whole:]
	}
	if len(data) > 0 {
		var s [gcmBlockSize]byte
		copy(s[:], data)
		ghashBlocks(g, x, s[:])
	}
}

func deriveCounter(g *GCM, counter *[gcmBlockSize]byte, nonce []byte) {
	if len(nonce) == gcmStandardNonceSize {
		copy(counter[:], nonce)
		counter[gcmBlockSize-1] = 1
		return
	}
	var x ghashState
	paddedGHASH(g, &x, nonce)
	var lens [gcmBlockSize]byte
	byteorder.BEPutUint64(lens[8:], uint64(len(nonce))*8)
	ghashBlocks(g, &x, lens[:])
	*counter = *x.bytes()
}

// counterCrypt encrypts in into out from counter (not updated): the whole blocks by
// aes.CTR32, a last partial block by one more block of key stream.
func counterCrypt(g *GCM, out, in []byte, counter *[gcmBlockSize]byte) {
	whole := len(in) &^ (gcmBlockSize - 1)
	aes.CTR32(&g.cipher, out[:whole], in[:whole], counter)
	if tail := in[whole:]; len(tail) > 0 {
		c := *counter
		byteorder.BEPutUint32(c[12:], byteorder.BEUint32(c[12:])+uint32(whole/gcmBlockSize))
		var mask [gcmBlockSize]byte
		aes.EncryptBlockInternal(&g.cipher, mask[:], c[:])
		subtle.XORBytes(out[whole:], tail, mask[:])
	}
}

// auth is the tag before truncation: GHASH of the additional data, the ciphertext and
// their lengths, XORed with tagMask.
func auth(g *GCM, tag *[gcmTagSize]byte, ciphertext, data []byte, tagMask *[gcmTagSize]byte) {
	var x ghashState
	paddedGHASH(g, &x, data)
	paddedGHASH(g, &x, ciphertext)
	var lens [gcmBlockSize]byte
	byteorder.BEPutUint64(lens[:8], uint64(len(data))*8)
	byteorder.BEPutUint64(lens[8:], uint64(len(ciphertext))*8)
	ghashBlocks(g, &x, lens[:])
	subtle.XORBytes(tag[:], x.bytes()[:], tagMask[:])
}

func seal(out []byte, g *GCM, nonce, plaintext, data []byte) {
	if !supportsAESGCM {
		if kgen.Trace {
			kgen.Count(kgen.GHASHGeneric)
		}
		sealGeneric(out, g, nonce, plaintext, data)
		return
	}
	var counter, tagMask [gcmBlockSize]byte
	deriveCounter(g, &counter, nonce)
	aes.EncryptBlockInternal(&g.cipher, tagMask[:], counter[:])
	gcmInc32(&counter)
	counterCrypt(g, out, plaintext, &counter)
	var tag [gcmTagSize]byte
	auth(g, &tag, out[:len(plaintext)], data, &tagMask)
	copy(out[len(plaintext):], tag[:])
}

func open(out []byte, g *GCM, nonce, ciphertext, data []byte) error {
	if !supportsAESGCM {
		if kgen.Trace {
			kgen.Count(kgen.GHASHGeneric)
		}
		return openGeneric(out, g, nonce, ciphertext, data)
	}
	var counter, tagMask [gcmBlockSize]byte
	deriveCounter(g, &counter, nonce)
	aes.EncryptBlockInternal(&g.cipher, tagMask[:], counter[:])
	gcmInc32(&counter)
	tag := ciphertext[len(ciphertext)-g.tagSize:]
	ciphertext = ciphertext[:len(ciphertext)-g.tagSize]
	var expectedTag [gcmTagSize]byte
	auth(g, &expectedTag, ciphertext, data, &tagMask)
	if subtle.ConstantTimeCompare(expectedTag[:g.tagSize], tag) != 1 {
		return errOpen
	}
	counterCrypt(g, out, ciphertext, &counter)
	return nil
}
@DECLS@"#;

/// The counters' constants: for each group (package path, kernel, name of Go's own code)
/// its first path `X` and its Go code's `XGeneric` (gofmt's alignment).
fn paths_consts(groups: &[(&str, &Filled, &str)]) -> String {
    let idents: Vec<String> = groups.iter().map(|(pkg, _, _)| pkg.to_uppercase()).collect();
    let w = idents.iter().map(|i| i.len() + "Generic".len()).max().unwrap_or(0);
    let mut s = String::new();
    let mut prev: Option<String> = None;
    for (i, (_, f, _)) in idents.iter().zip(groups) {
        let start = prev.map_or("0".to_string(), |p| format!("{p} + 1"));
        s += &format!("\t{i:<w$} Path = {start}\n");
        let generic = format!("{i}Generic");
        s += &format!("\t{generic:<w$} Path = {i} + {}\n", f.variants.len());
        prev = Some(generic);
    }
    s += &format!("\t{:<w$}      = {} + 1\n", "numPaths", prev.unwrap_or_default());
    s
}

/// The variant selection of a package's riscv64 file: the variants' names (`<prefix>Variants`),
/// the one this CPU runs (`<prefix>Variant`, decided once from the variants' conditions), the
/// flag that says kgen's code runs (registered with crypto/internal/impl as `pkg`'s, so the
/// tests run Go's own `own` too).
fn selection(f: &Filled, prefix: &str, flag: &str, pkg: &str, own: &str) -> String {
    let (names, var) = (format!("{prefix}Variants"), format!("{prefix}Variant"));
    format!(
        "var {names} = [...]string{{{}}}\n\n// {var} is the variant this CPU runs (-1: none, Go's own {own}), decided once.\nvar {var} = func() int {{\n\tswitch {{\n{}\t}}\n\treturn -1\n}}()\n\nvar {flag} = {var} >= 0\n\nfunc init() {{\n\tif {flag} {{\n\t\timpl.Register(\"{pkg}\", \"kgen \"+{names}[{var}], &{flag})\n\t}}\n}}",
        self::names(f),
        detect(f)
    )
}

/// The detection switch's cases: each variant's condition, returning its index.
fn detect(f: &Filled) -> String {
    f.variants.iter().enumerate().map(|(i, (_, _, cond))| format!("\tcase {cond}:\n\t\treturn {i}\n")).collect()
}

/// One `case` per variant index, running `body` with `F<k>` replaced by the Go name of the
/// variant's entry `k`.
fn cases(f: &Filled, body: &[&str]) -> Result<String, String> {
    let mut s = String::new();
    for i in 0..f.variants.len() {
        s += &format!("\tcase {i}:\n");
        for line in body {
            let mut l = line.to_string();
            for k in 0..f.hook.entries.len() {
                l = l.replace(&format!("F{k}"), &f.func(k, i)?);
            }
            s += &format!("\t\t{l}\n");
        }
    }
    Ok(s)
}

fn variant_doc(f: &Filled) -> String {
    f.variants.iter().map(|(v, _, cond)| format!("//   - {v}, where {cond}")).collect::<Vec<_>>().join("\n")
}

fn names(f: &Filled) -> String {
    f.variants.iter().map(|(v, _, _)| format!("\"{v}\"")).collect::<Vec<_>>().join(", ")
}

fn patches(base: &Base, kernels: &[&'static Kernel]) -> Result<Vec<Patch>, String> {
    let regen = command(base.name);
    let aes = filled(kernels, GoStdSlot::Aes, 5)?;
    let ghash = filled(kernels, GoStdSlot::Ghash, 2)?;
    let sha256 = filled(kernels, GoStdSlot::Sha2 { bits: 256 }, 1)?;
    let sha512 = filled(kernels, GoStdSlot::Sha2 { bits: 512 }, 1)?;
    let sub = |t: &str| {
        let text = t.replace("REGEN", &regen).replace("Code generated by kgen;", &format!("Code generated by {};", kgen_emit::GENERATOR));
        format!("// SPDX-License-Identifier: {}\n{text}", kgen_emit::spdx(Abi::Go))
    };
    let header = |what: String| vec!["Regenerate with:".into(), format!("  {regen}"), what];
    let groups: [(&str, &Filled, &str); 5] = [("aes", &aes, "generic"), ("ctr", &aes, "generic"), ("ghash", &ghash, "generic"), ("sha256", &sha256, "go"), ("sha512", &sha512, "go")];
    let all_names = groups
        .iter()
        .flat_map(|(pkg, f, own)| f.variants.iter().map(move |(v, _, _)| format!("\"{pkg}.{v}\"")).chain([format!("\"{pkg}.{own}\"")]))
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = Vec::new();

    let kgen = sub(KGEN_GO).replace("@PATHS@", &paths_consts(&groups)).replace("@NAMES@", &all_names);
    out.push(Patch {
        subject: "internal/cpu, runtime: detect the T-Head extensions of kgen's riscv64 kernels".into(),
        body: "riscv_hwprobe, once at start-up: a T-Head core (mvendorid 0x5b7 and a\nknown marchid/mimpid: C906, C910) has the T-Head scalar extensions;\nkey 11 bit 0 says XTheadVector. Without the syscall (ENOSYS, kernels\nbefore 6.4, as the vendor kernels of C906 boards) the V bit of AT_HWCAP\ncan only be T-Head's 0.7.1 vector: the runtime keeps AT_HWCAP for riscv64\nas it does for arm64. GODEBUG=cpu.theadscalar=off and\ncpu.xtheadvector=off turn them off. crypto/internal/kgen counts, in\nbuilds with the kgen_trace tag, which kernel each call ran and prints\nthe counts at exit.".into(),
        files: vec![
            ("src/internal/cpu/cpu_thead_linux_riscv64.go".into(), sub(THEAD_GO)),
            ("src/crypto/internal/kgen/kgen.go".into(), kgen),
            ("src/crypto/internal/kgen/trace.go".into(), sub(KGEN_TRACE_GO)),
            ("src/crypto/internal/kgen/notrace.go".into(), sub(KGEN_NOTRACE_GO)),
        ],
        edits: vec![0, 1, 2, 3, 4, 5, 6],
    });

    let spec = GoAsmSpec {
        parts: aes.variants.iter().map(|(v, m, _)| (m, aes.hook.entries.iter().map(|e| e.symbol(v)).collect())).collect(),
        preamble: vec![],
        build: "riscv64 && !purego".into(),
        header: header(format!("Kernel: {} ({}).", aes.kernel.name, aes.variants.iter().map(|v| v.0).collect::<Vec<_>>().join(", "))),
    };
    let a = go_asm(&spec).map_err(|e| format!("go-patches: aes: {e}"))?;
    let go = sub(AES_GO)
        .replace("@VARIANT_DOC@", &variant_doc(&aes))
        .replace("@SELECTION@", &selection(&aes, "aes", "supportsAES", "aes", "code"))
        .replace("@KERNEL@", aes.kernel.name)
        .replace("@SETKEY@", &cases(&aes, &["e = F0(&key[0], bits, c.kenc.ptr())", "d = F1(&key[0], bits, c.kdec.ptr())"])?)
        .replace("@ENCRYPT@", &cases(&aes, &["F2(&src[0], &dst[0], c.kenc.ptr())"])?)
        .replace("@DECRYPT@", &cases(&aes, &["F3(&src[0], &dst[0], c.kdec.ptr())"])?)
        .replace("@CTR32@", &cases(&aes, &["F4(&src[0], &dst[0], uint64(n), b.kenc.ptr(), &iv[0])"])?)
        .replace("@DECLS@", &a.decls);
    out.push(Patch {
        subject: format!("crypto/internal/fips140/aes: constant-time AES on riscv64 from kgen's {}", aes.kernel.name),
        body: format!(
            "The block cipher, CTR and GCM's counter mode run on kgen's {k} kernel,\nwhich has no table lookups and no branch or address that depends on\nthe key or the data (Go's generic AES is table-based). The first\nvariant the CPU can run is chosen once:\n{list}\nCTR hands all the whole blocks of a call to the kernel at once\n(ctrBulk; on other architectures it does nothing), splitting where\nthe low 32 bits of the counter wrap. impl lists the kgen variant, so\nthe tests run both it and the generic code.",
            k = aes.kernel.name,
            list = aes.variants.iter().map(|(v, _, c)| format!("  {v}, where {c}")).collect::<Vec<_>>().join("\n")
        ),
        files: vec![
            ("src/crypto/internal/fips140/aes/aes_riscv64.go".into(), go),
            ("src/crypto/internal/fips140/aes/aes_riscv64.s".into(), a.s),
            ("src/crypto/internal/fips140/aes/ctr_bulk_other.go".into(), sub(CTR_OTHER_GO)),
        ],
        edits: vec![7, 8],
    });

    let spec = GoAsmSpec {
        parts: ghash.variants.iter().map(|(v, m, _)| (m, ghash.hook.entries.iter().map(|e| e.symbol(v)).collect())).collect(),
        preamble: vec![],
        build: "riscv64 && !purego".into(),
        header: header(format!("Kernel: {} ({}).", ghash.kernel.name, ghash.variants.iter().map(|v| v.0).collect::<Vec<_>>().join(", "))),
    };
    let a = go_asm(&spec).map_err(|e| format!("go-patches: gcm: {e}"))?;
    let go = sub(GCM_GO)
        .replace("@VARIANT_DOC@", &variant_doc(&ghash))
        .replace("@SELECTION@", &selection(&ghash, "ghash", "supportsAESGCM", "gcm", "code"))
        .replace("@AES_KERNEL@", aes.kernel.name)
        .replace("@KERNEL@", ghash.kernel.name)
        .replace("@INIT@", &cases(&ghash, &["F0(g.table(), &H[0])"])?)
        .replace("@GHASH@", &cases(&ghash, &["F1(&x[0], g.table(), &blocks[0], uint64(len(blocks)))"])?)
        .replace("@DECLS@", &a.decls);
    out.push(Patch {
        subject: format!("crypto/internal/fips140/aes/gcm: GCM on riscv64 from kgen's {} and {}", aes.kernel.name, ghash.kernel.name),
        body: format!(
            "GCM runs on aes's constant-time counter mode and on kgen's {k} kernel\nfor GHASH (constant time: no tables, and on the C906 every multiply has\noperands below 2^32, whose timing does not depend on the data). The\nfirst variant the CPU can run is chosen once:\n{list}\nThe GHASH table (OpenSSL's gcm_init layout) is kept in the GCM value.\nopen checks the tag in constant time before it decrypts.",
            k = ghash.kernel.name,
            list = ghash.variants.iter().map(|(v, _, c)| format!("  {v}, where {c}")).collect::<Vec<_>>().join("\n")
        ),
        files: vec![("src/crypto/internal/fips140/aes/gcm/gcm_riscv64.go".into(), go), ("src/crypto/internal/fips140/aes/gcm/gcm_riscv64.s".into(), a.s)],
        edits: vec![9],
    });

    for (f, bits, edits) in [(&sha256, 256, [10, 11]), (&sha512, 512, [12, 13])] {
        let pkg = format!("sha{bits}");
        let spec = GoAsmSpec {
            parts: f.variants.iter().map(|(v, m, _)| (m, vec![f.hook.entries[0].symbol(v)])).collect(),
            preamble: vec![],
            build: "riscv64 && !purego".into(),
            header: header(format!("Kernel: {} ({}).", f.kernel.name, f.variants.iter().map(|v| v.0).collect::<Vec<_>>().join(", "))),
        };
        let a = go_asm(&spec).map_err(|e| format!("go-patches: {pkg}: {e}"))?;
        let go = sub(SHA_GO)
            .replace("@VARIANT_DOC@", &variant_doc(f))
            .replace("@SELECTION@", &selection(f, "kgen", "useKgen", &pkg, "assembly"))
            .replace("@KERNEL@", f.kernel.name)
            .replace("@PKG@", &pkg)
            .replace("@GROUP@", &pkg.to_uppercase())
            .replace("@BLOCK@", &cases(f, &["F0(&dig.h[0], &p[0], uint64(len(p)))"])?)
            .replace("@DECLS@", &a.decls);
        out.push(Patch {
            subject: format!("crypto/internal/fips140/{pkg}: kgen's {} on T-Head riscv64 cores", f.kernel.name),
            body: format!(
                "block runs kgen's {k} kernel where the CPU can run one of its\nvariants:\n{list}\nand Go's own riscv64 assembly, renamed blockRISCV64, elsewhere. On the\nC906 kgen's is faster: its rotations are one T-Head instruction\n(kgen's tests measure both on its C906 model). impl lists the kgen\nvariant, so the tests run both.",
                k = f.kernel.name,
                list = f.variants.iter().map(|(v, _, c)| format!("  {v}, where {c}")).collect::<Vec<_>>().join("\n")
            ),
            files: vec![(format!("src/crypto/internal/fips140/{pkg}/{pkg}block_riscv64.go"), go), (format!("src/crypto/internal/fips140/{pkg}/{pkg}block_kgen_riscv64.s"), a.s)],
            edits: edits.to_vec(),
        });
    }
    Ok(out)
}

/// The files the series adds (path in GOROOT, contents): kgen's own text.
pub fn added_files(name: &str, kernels: &[&'static Kernel]) -> Result<Vec<(String, String)>, String> {
    let base = BASES.iter().find(|b| b.name == name).ok_or_else(|| format!("go-patches: unknown base `{name}`"))?;
    Ok(patches(base, kernels)?.into_iter().flat_map(|p| p.files).collect())
}

/// Writes the series for base `name` into `out`. Returns the patch files written.
pub fn run(name: &str, out: &Path, kernels: &[&'static Kernel]) -> Result<Vec<PathBuf>, String> {
    let base = BASES
        .iter()
        .find(|b| b.name == name)
        .ok_or_else(|| format!("go-patches: unknown base `{name}` (known: {})", BASES.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")))?;
    let src = base.path();
    check_edits("go-patches", name, &src, base.edits)?;
    let series = patches(base, kernels)?;
    // Only the files the series edits are needed for the patches' context.
    let copy = |repo: &Path| {
        for (file, _, _) in base.edits {
            let to = repo.join(file);
            std::fs::create_dir_all(to.parent().unwrap()).map_err(|e| format!("go-patches: {}: {e}", to.display()))?;
            if !to.exists() {
                std::fs::copy(src.join(file), &to).map_err(|e| format!("go-patches: {file}: {e}"))?;
            }
        }
        Ok(())
    };
    format("go-patches", name, &format!("Go's tree as in {}", base.dir), copy, base.edits, &series, &command(base.name), out)
}

//! What an AES-GCM caller sets up with other kernels before it calls `aes-gcm`'s bulk
//! functions: the AES key schedule (`aes c906`'s `AES_set_encrypt_key`), H = E(K, 0) and
//! the GHASH table (`ghash c906`'s `gcm_init_c906`), computed by those kernels in
//! kgen-sim. The benchmark driver, the known-answer plan and the tests use it.

use kgen_dsl::Abi;
use kgen_kernels::{aes, ghash};
use kgen_sim::Env;

/// A key's material, as a gcm128_context holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcmKey {
    /// `AES_KEY`: 60 round-key words, then the round count (244 bytes).
    pub schedule: Vec<u8>,
    /// H = E(K, 0^128) as bytes.
    pub h: [u8; 16],
    /// `gcm_init_c906`'s table (256 bytes).
    pub htable: Vec<u8>,
}

/// The `aes` and `ghash` kernels' `c906` variants in kgen-sim.
pub struct GcmSetup {
    aes: Env,
    ghash: Env,
}

impl GcmSetup {
    pub fn new() -> Result<GcmSetup, String> {
        let env = |k: &str| -> Result<Env, String> {
            let m = kgen_kernels::kernel(k).ok_or_else(|| format!("no kernel `{k}`"))?.variant("c906").ok_or_else(|| format!("{k} has no c906 variant"))?.build(Abi::Psabi).map_err(|e| e.to_string())?;
            Env::new(&m.object().map_err(|e| e.to_string())?, &m.target)
        };
        Ok(GcmSetup { aes: env("aes")?, ghash: env("ghash")? })
    }

    /// The material of `key` (16, 24 or 32 bytes).
    pub fn key(&mut self, key: &[u8]) -> Result<GcmKey, String> {
        let e = |x: kgen_sim::CallError| x.to_string();
        let a = &mut self.aes;
        let (_, set) = a.entry(&aes::SET_ENCRYPT_KEY)?;
        let (_, enc) = a.entry(&aes::ENCRYPT)?;
        let kb = a.buffer(key, 0, false);
        let ks = a.buffer(&[0u8; 244], 0, true);
        let r = a.call(set, &[kb, key.len() as u64 * 8, ks]).map_err(e)?;
        if r.a0 != 0 {
            return Err(format!("AES_set_encrypt_key({} bits) returned {}", key.len() * 8, r.a0 as i64));
        }
        let blk = a.buffer(&[0u8; 16], 0, true);
        a.call(enc, &[blk, blk, ks]).map_err(e)?;
        let h: [u8; 16] = a.read(blk, 16).try_into().expect("16 bytes");
        let schedule = a.read(ks, 244);
        let g = &mut self.ghash;
        let (_, init) = g.entry(&ghash::INIT)?;
        // u64 H[2] in host order: the big-endian words of E(0), as OpenSSL passes them.
        let mut hw = u64::from_be_bytes(h[..8].try_into().expect("8 bytes")).to_le_bytes().to_vec();
        hw.extend_from_slice(&u64::from_be_bytes(h[8..].try_into().expect("8 bytes")).to_le_bytes());
        let hp = g.buffer(&hw, 0, false);
        let table = g.buffer(&[0u8; 256], 0, true);
        g.call(init, &[table, hp]).map_err(e)?;
        Ok(GcmKey { schedule, h, htable: g.read(table, 256) })
    }
}

impl GcmKey {
    /// A gcm128_context's tail from Xi on, as the bulk functions read it: Xi (16 bytes),
    /// H (host-order words), Htable.
    pub fn context(&self, xi: &[u8; 16]) -> Vec<u8> {
        let mut c = xi.to_vec();
        c.extend_from_slice(&u64::from_be_bytes(self.h[..8].try_into().expect("8 bytes")).to_le_bytes());
        c.extend_from_slice(&u64::from_be_bytes(self.h[8..].try_into().expect("8 bytes")).to_le_bytes());
        c.extend_from_slice(&self.htable);
        c
    }
}

/* Prints GNU binutils' RISC-V opcode table (libopcodes' riscv_opcodes[]) as TSV:
 *   name  xlen  insn_class  args  match  mask  pinfo
 * Usage: binutils-opcodes PATH/libopcodes-2.44-riscv64.so
 * The struct layout is binutils 2.44's `struct riscv_opcode` (include/opcode/riscv.h).
 * kgen's tests use it to compare the ISA table's fixed bits with binutils' and to
 * list the XTheadVector forms binutils accepts (docs/isa-coverage.md). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

struct riscv_opcode_2_44 {
  const char *name;
  unsigned xlen_requirement;
  int insn_class;
  const char *args;
  uint64_t match, mask;
  void *match_func;
  unsigned long pinfo;
};

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: %s libopcodes.so\n", argv[0]); return 2; }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  const struct riscv_opcode_2_44 *op = dlsym(h, "riscv_opcodes");
  if (!op) { fprintf(stderr, "no riscv_opcodes symbol\n"); return 1; }
  for (; op->name; op++)
    printf("%s\t%u\t%d\t%s\t%08llx\t%08llx\t%lx\n", op->name, op->xlen_requirement, op->insn_class, op->args,
           (unsigned long long)op->match, (unsigned long long)op->mask, op->pinfo);
  return 0;
}

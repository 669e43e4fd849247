// The fiber switch of the GPU emulation (emulation.hpp), x86-64 System V on Linux (ELF). It saves
// what a call must preserve (rbp, rbx, r12-r15, MXCSR and the x87 control word) on the running
// stack, stores that stack's top in *save and resumes the stack at `load`. swapcontext also saves and
// restores the signal mask, a system call each way: they were half the run time of the emulated tests.
// A new fiber's stack is laid out as a switch left it (EmulatedBlock::new_fiber), so that its first
// resumption returns into porta_emulated_fiber_start, which calls r13 with r12 as its argument. It
// does not switch CET shadow stacks, which swapcontext does: tests/CMakeLists.txt builds this file
// without -fcf-protection, so no executable with it asks for them.
asm(R"(
  .pushsection .text
  .globl porta_emulated_fiber_switch
  .type porta_emulated_fiber_switch, @function
  .p2align 4
porta_emulated_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size porta_emulated_fiber_switch, .-porta_emulated_fiber_switch

  .globl porta_emulated_fiber_start
  .type porta_emulated_fiber_start, @function
  .p2align 4
porta_emulated_fiber_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
  .size porta_emulated_fiber_start, .-porta_emulated_fiber_start
  .popsection
)");

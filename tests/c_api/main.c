/* The C API's tests, in C11: every op on every device of the build against ref (op_cases.c) and every
 * error path (errors.c), and training (training.c). With the argument use-after-free it uses a freed graph, which the library
 * reports as an invalid handle, and which AddressSanitizer stops at (tests/CMakeLists.txt). */
#include <stdio.h>
#include <string.h>

#include "check.h"

int check_failures = 0;
int check_count = 0;

static int use_after_free(void) {
  porta_graph* graph = NULL;
  CHECK_OK(porta_graph_create(&graph));
  porta_graph_free(graph);
  const int64_t shape[] = {2};
  porta_tensor x;
  CHECK_STATUS(porta_graph_input(graph, "x", shape, 1, PORTA_F32, NULL, &x), PORTA_INVALID_ARGUMENT);
  printf("use after free: %s\n", porta_last_error());
  return check_failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "use-after-free") == 0) return use_after_free();
  run_error_paths();
  run_training();
  const int devices = run_op_cases();
  printf("%d checks, %d failed\n", check_count, check_failures);
  if (check_failures == 0 && devices == 0) printf("SKIPPED: no device under test is present\n");
  return check_failures == 0 ? 0 : 1;
}

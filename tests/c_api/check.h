/* The C API tests' checks: each failed one prints where and why and is counted; main() exits non-zero
 * when any failed. */
#ifndef PORTA_TEST_C_API_CHECK_H
#define PORTA_TEST_C_API_CHECK_H

#include <stdio.h>

#include <porta/porta.h>

extern int check_failures;
extern int check_count;

#define CHECK(cond)                                                          \
  do {                                                                       \
    ++check_count;                                                           \
    if (!(cond)) {                                                           \
      ++check_failures;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                        \
  } while (0)

/* A call that must give `expected`; on any other status the message of porta_last_error is shown. */
#define CHECK_STATUS(call, expected)                                                                  \
  do {                                                                                                \
    const porta_status got_ = (call);                                                                 \
    ++check_count;                                                                                    \
    if (got_ != (expected)) {                                                                         \
      ++check_failures;                                                                               \
      fprintf(stderr, "%s:%d: %s gave %s, expected %s (%s)\n", __FILE__, __LINE__, #call,             \
              porta_status_string(got_), porta_status_string(expected), got_ ? porta_last_error() : ""); \
    }                                                                                                 \
  } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, PORTA_OK)

/* The op cases on every device under test (op_cases.c); the error paths (errors.c); training (training.c). */
int run_op_cases(void);
void run_error_paths(void);
void run_training(void);

#endif

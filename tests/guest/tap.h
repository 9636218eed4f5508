/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal TAP 13 output for the guest test programs. */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;

static inline void tap_plan_end(void)
{
	printf("1..%d\n", tap_count);
	fflush(stdout);
}

/* One case: ok if @pass, with @fmt naming it. */
static inline int __attribute__((format(printf, 2, 3)))
tap_case(int pass, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return pass;
}

/* A diagnostic line under the last case. */
static inline void __attribute__((format(printf, 1, 2)))
tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

#endif /* TAP_H */

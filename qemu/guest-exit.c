// SPDX-License-Identifier: GPL-2.0
/*
 * guest-exit STATUS: end the QEMU guest through the isa-debug-exit device
 * at port 0xf4. QEMU then exits with STATUS * 2 + 1, so the host tells a
 * guest that reported (odd) from one that rebooted or panicked (0).
 */
#include <err.h>
#include <stdlib.h>
#include <sys/io.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int status = argc > 1 ? atoi(argv[1]) : 0;

	sync();
	if (ioperm(0xf4, 4, 1) < 0)
		err(EXIT_FAILURE, "ioperm");
	outb((unsigned char)status, 0xf4);
	errx(EXIT_FAILURE, "still running after writing to the debug-exit port");
}

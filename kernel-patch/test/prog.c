/* prog.c - guest side of "make -C kernel-patch qemu-test": a dynamic program
 * run from the cold disk through its own loader and libc. */
#include <stdio.h>

int
main(void)
{
	return puts("MMAP3-TEST: cold: prog ran") == EOF;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The LD_PRELOAD shim of `ksmsim record --find pagemap-scan` (shim.h): in
 * every process of the recorded tree, a userfaultfd of its own mm with async
 * write-protect at SHIM_UFFD_FD, for the recorder to take. It only creates
 * the fd: registering ranges and scanning them is the recorder's, from
 * outside. Built unsanitized and with nothing but libc: it is loaded into
 * programs that know nothing of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "workloads/record/shim.h"

static ino_t shim_ino;		/* our fd's inode: tells it apart from a reused number */

static bool shim_enabled(void)
{
	const char *v = getenv(SHIM_ENV);

	return v && strcmp(v, "1") == 0;
}

/* A new userfaultfd at SHIM_UFFD_FD; quietly nothing where that fails. */
static void shim_install(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = SHIM_UFFD_FEATURES };
	struct stat st;
	int fd;

	/* never take the place of an fd the program has */
	if (fcntl(SHIM_UFFD_FD, F_GETFD) >= 0)
		return;
	fd = (int)syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	if (ioctl(fd, UFFDIO_API, &api) == 0 &&
	    (api.features & SHIM_UFFD_FEATURES) == SHIM_UFFD_FEATURES &&
	    dup3(fd, SHIM_UFFD_FD, O_CLOEXEC) == SHIM_UFFD_FD && fstat(SHIM_UFFD_FD, &st) == 0)
		shim_ino = st.st_ino;
	close(fd);
}

/*
 * After fork() the child has a copy of the parent's mm but not its
 * registrations, and the inherited fd still acts on the parent's mm:
 * replace it with one of the child's own.
 */
static void shim_child(void)
{
	struct stat st;
	int saved = errno;

	if (shim_ino && fstat(SHIM_UFFD_FD, &st) == 0 && st.st_ino == shim_ino) {
		close(SHIM_UFFD_FD);
		shim_ino = 0;
		shim_install();
	}
	errno = saved;
}

__attribute__((constructor)) static void shim_init(void)
{
	int saved = errno;

	if (shim_enabled()) {
		shim_install();
		if (shim_ino)
			pthread_atfork(NULL, NULL, shim_child);
	}
	errno = saved;
}

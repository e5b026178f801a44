// SPDX-License-Identifier: GPL-2.0-or-later
/* gnuplot started for a PNG (gnuplot.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "analysis/gnuplot.h"
#include "util/fd_io.h"

/* gnuplot with script on its standard input and its standard output on out_fd (-1: /dev/null). */
static bool gnuplot(const char *script, int out_fd, int *ws, GQuark domain, GError **error)
{
	int in[2];
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;

	if (pipe(in) < 0) {
		g_set_error(error, domain, 2, "pipe: %s", g_strerror(errno));
		return false;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		g_set_error(error, domain, 2, "fork: %s", g_strerror(errno));
		close(in[0]);
		close(in[1]);
		return false;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(in[0], 0);
		dup2(out_fd >= 0 ? out_fd : null, 1);
		if (out_fd < 0)
			dup2(null, 2);
		close(in[0]);
		close(in[1]);
		execlp("gnuplot", "gnuplot", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	/* a gnuplot that dies early must not end us by SIGPIPE: its status says what happened */
	sigaction(SIGPIPE, &ign, &old);
	fd_write_all(in[1], script, strlen(script));
	close(in[1]);
	sigaction(SIGPIPE, &old, NULL);
	while (waitpid(pid, ws, 0) < 0)
		if (errno != EINTR) {
			g_set_error(error, domain, 2, "waitpid: %s", g_strerror(errno));
			return false;
		}
	return true;
}

bool gnuplot_available(GQuark domain, GError **error)
{
	int ws;

	if (!gnuplot("set terminal pngcairo\n", -1, &ws, domain, error))
		return false;
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == 127) {
		g_set_error(error, domain, 2,
			    "--plot: cannot run gnuplot (not installed? apt-get install gnuplot-nox)");
		return false;
	}
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		g_set_error(error, domain, 2, "--plot: this gnuplot has no pngcairo terminal");
		return false;
	}
	return true;
}

/* A whole PNG: the signature first, the IEND chunk (length 0, its CRC) last. */
static bool png_complete(const unsigned char *b, size_t n)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D',
						0xae, 0x42, 0x60, 0x82 };

	return n >= sizeof(sig) + sizeof(iend) && !memcmp(b, sig, sizeof(sig)) &&
	       !memcmp(b + n - sizeof(iend), iend, sizeof(iend));
}

/*
 * gnuplot draws into a memory file, not into png: it exits 0 when its own
 * writes fail (a full file system, /dev/full), which left a truncated PNG
 * committed. Here the whole PNG is checked, then written to png with
 * checked writes; the caller commits png only when this returns true.
 */
bool gnuplot_draw(FILE *png, const char *script, GQuark domain, GError **error)
{
	int ws, mem = memfd_create("ksmsim-plot", MFD_CLOEXEC);
	struct stat st;
	unsigned char *b = NULL;
	size_t n = 0;
	bool ok = false;

	if (mem < 0) {
		g_set_error(error, domain, 2, "--plot: memfd_create: %s", g_strerror(errno));
		return false;
	}
	if (!gnuplot(script, mem, &ws, domain, error))
		goto out;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		g_set_error(error, domain, 2, "--plot: gnuplot %s",
			    WIFEXITED(ws) && WEXITSTATUS(ws) == 127 ?
			    "could not be started (not installed?)" : "failed (its message is above)");
		goto out;
	}
	if (fstat(mem, &st) != 0 || st.st_size == 0) {
		g_set_error(error, domain, 2, "--plot: gnuplot wrote nothing");
		goto out;
	}
	n = (size_t)st.st_size;
	b = g_malloc(n);
	if (lseek(mem, 0, SEEK_SET) != 0 || fd_read_all(mem, b, n) != n || !png_complete(b, n)) {
		g_set_error(error, domain, 2, "--plot: gnuplot wrote an incomplete PNG "
			    "(%zu bytes, no IEND)", n);
		goto out;
	}
	errno = 0;
	if (fwrite(b, 1, n, png) != n || fflush(png) != 0) {
		g_set_error(error, domain, 2, "--plot: write failed: %s",
			    g_strerror(errno ? errno : EIO));
		goto out;
	}
	ok = true;
out:
	g_free(b);
	close(mem);
	return ok;
}

void gnuplot_quoted(GString *s, const char *v)
{
	g_string_append_c(s, '\'');
	for (const char *p = v; *p; p++) {
		if (*p == '\'')
			g_string_append_c(s, '\'');
		if (*p != '\n' && *p != '\r')
			g_string_append_c(s, *p);
	}
	g_string_append_c(s, '\'');
}

void gnuplot_log_tics(GString *s, double lo, double hi)
{
	int n = 0;

	g_string_append(s, "set xtics (");
	for (int d = (int)floor(log10(lo)); d <= (int)ceil(log10(hi)); d++)
		for (int m = 0; m < 3; m++) {
			double v = (m == 0 ? 1 : m == 1 ? 2 : 5) * pow(10, d);

			if (v >= lo && v <= hi)
				g_string_append_printf(s, "%s%.6g", n++ ? ", " : "", v);
		}
	g_string_append(s, ")\n");
}

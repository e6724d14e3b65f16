/*
 * writer_lock.c - one writing passnet process per store (writer_lock.h).
 */
#include "store/writer_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"

static struct flock whole_file(short type)
{
	struct flock l;
	memset(&l, 0, sizeof l);
	l.l_type = type;
	l.l_whence = SEEK_SET;   /* start 0, len 0: the whole file */
	return l;
}

int pn_writer_lock(const char *dir, int *fd, char *err)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/writer.lock", dir);
	*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0)
		return pn_fail(err, "store %s: %s: %s", dir, path, strerror(errno));
	struct flock l = whole_file(F_WRLCK);
	if (fcntl(*fd, F_SETLK, &l) == 0)
		return 0;
	if (errno != EACCES && errno != EAGAIN) {
		int e = errno;
		close(*fd);
		return pn_fail(err, "store %s: locking %s: %s", dir, path, strerror(e));
	}
	struct flock who = whole_file(F_WRLCK);
	long pid = fcntl(*fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? (long)who.l_pid : -1;
	if (pid > 0)
		pn_warn("store %s is being written by passnet process %ld; waiting for it to end", dir,
			pid);
	else
		pn_warn("store %s is being written by another passnet process; waiting for it to end", dir);
	while (fcntl(*fd, F_SETLKW, &l) != 0) {
		if (errno == EINTR)
			continue;
		int e = errno;
		close(*fd);
		return pn_fail(err, "store %s: waiting for %s: %s", dir, path, strerror(e));
	}
	return 0;
}

void pn_writer_unlock(int fd)
{
	if (fd >= 0)
		close(fd);   /* closing drops the process's locks on the file */
}

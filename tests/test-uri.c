/* Unit tests for nbd_uri_parse in common/connect.c, the parser behind
 * --socket-buffer.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect.h"

static int failures;

static void
ok (const char *uri, bool unix_socket, const char *host, const char *port,
    const char *sock, const char *export_name)
{
  struct nbd_uri u;
  const char *why = NULL;

  if (nbd_uri_parse (uri, &u, &why) == -1) {
    fprintf (stderr, "%s: rejected: %s\n", uri, why);
    failures++;
    return;
  }
#define SAME(a, b) ((a) == NULL ? (b) == NULL : (b) != NULL && strcmp (a, b) == 0)
  if (u.unix_socket != unix_socket || !SAME (host, u.host) ||
      !SAME (port, u.port) || !SAME (sock, u.socket_path) ||
      !SAME (export_name, u.export_name)) {
    fprintf (stderr, "%s: parsed as unix=%d host=%s port=%s socket=%s "
             "export=%s\n", uri, u.unix_socket, u.host, u.port,
             u.socket_path, u.export_name);
    failures++;
  }
  nbd_uri_free (&u);
}

static void
bad (const char *uri)
{
  struct nbd_uri u;
  const char *why = NULL;

  if (nbd_uri_parse (uri, &u, &why) != -1) {
    fprintf (stderr, "%s: accepted\n", uri);
    nbd_uri_free (&u);
    failures++;
  }
  else if (why == NULL) {
    fprintf (stderr, "%s: rejected without a reason\n", uri);
    failures++;
  }
}

int
main (void)
{
  ok ("nbd://localhost", false, "localhost", "10809", NULL, "");
  ok ("nbd://127.0.0.1:10810/", false, "127.0.0.1", "10810", NULL, "");
  ok ("nbd://example.com/disk", false, "example.com", "10809", NULL, "disk");
  ok ("nbd://[::1]:2000/a%20b", false, "::1", "2000", NULL, "a b");
  ok ("nbd://[::1]", false, "::1", "10809", NULL, "");
  ok ("nbd+unix:///?socket=/tmp/s.sock", true, NULL, NULL, "/tmp/s.sock", "");
  ok ("nbd+unix:///exp?socket=/tmp/a%3Fb", true, NULL, NULL, "/tmp/a?b", "exp");
  ok ("nbd+unix://?socket=/s", true, NULL, NULL, "/s", "");

  bad ("nbds://localhost/");                    /* TLS: libnbd's job */
  bad ("nbd+vsock:///");
  bad ("file:///tmp/x");
  bad ("nbd://");
  bad ("nbd://:10809/");
  bad ("nbd://[::1/");
  bad ("nbd://[::1]x/");
  bad ("nbd+unix:///");                         /* no socket */
  bad ("nbd+unix://host/?socket=/s");
  bad ("nbd+unix:///?socket=/s&tls=on");
  bad ("nbd://host/?socket=/s");
  bad ("nbd://host/%zz");
  bad ("nbd://host/%4");

  if (failures) {
    fprintf (stderr, "test-uri: %d checks failed\n", failures);
    return EXIT_FAILURE;
  }
  printf ("test-uri: all checks passed\n");
  return EXIT_SUCCESS;
}

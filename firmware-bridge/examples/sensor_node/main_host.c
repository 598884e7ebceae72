/*
 * main_host.c -- the sensor node as a Linux program: a simulated MCU on a serial
 * device (normally a pseudo-terminal's slave side), for end-to-end tests of the
 * host side without hardware. The application (sensor_node.c) and the library
 * are the same code the Cortex-M build runs; only the transport hook and the
 * hardware hooks differ.
 *
 *   sensor_node DEVICE [options]
 *     --button-every SEC   send a `button` EVENT (true) every SEC seconds (0 = never;
 *                          default 0, or $SN_BUTTON_EVERY)
 *     --temp C             simulated temperature (default 21.5, or $SN_TEMP)
 *     --temp-noise C       add uniform noise in [-C, C] to each reading (default 0)
 *     --temp-drift C       add C per read_temp call (default 0)
 *     --seed N             noise seed (default 1)
 *     --device-id ID       HELLO's device id (default "sensor-node")
 *     --verbose            log calls and events to stderr
 *   Signals: SIGTERM / SIGINT exit 0; SIGUSR1 presses the button (EVENT true),
 *   SIGUSR2 releases it (EVENT false).
 *   Exit codes: 0 on a signal, 1 on bad arguments, 2 when the device cannot be
 *   opened, 3 when it goes away (a read error, or a hang-up lasting 2 s).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sensor_node.h"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t button_signal; /* 1 press, 2 release */

static void on_signal(int sig)
{
    if (sig == SIGUSR1) {
        button_signal = 1;
    } else if (sig == SIGUSR2) {
        button_signal = 2;
    } else {
        stop_requested = 1;
    }
}

typedef struct {
    int fd;
    int verbose;
    double temp;
    double noise;
    double drift;
    unsigned long seed;
} host_t;

static uint32_t host_now_ms(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

/* Transport hook: like a UART FIFO, waits a little when the line is full and
 * then gives up (the protocol's retransmission recovers the frame). */
static size_t host_write(void *ctx, const uint8_t *data, size_t n)
{
    host_t *h = (host_t *)ctx;
    size_t done = 0;
    int waits = 0;
    while (done < n) {
        ssize_t w = write(h->fd, data + done, n - done);
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EINTR) && waits < 20) {
            struct pollfd p;
            p.fd = h->fd;
            p.events = POLLOUT;
            (void)poll(&p, 1, 5);
            waits++;
            continue;
        }
        break;
    }
    return done;
}

static float host_read_temp(void *ctx)
{
    host_t *h = (host_t *)ctx;
    double t = h->temp;
    if (h->noise > 0) {
        h->seed = h->seed * 1103515245ul + 12345ul;
        t += h->noise * (2.0 * (double)((h->seed >> 8) % 10001ul) / 10000.0 - 1.0);
    }
    h->temp += h->drift;
    if (h->verbose) {
        fprintf(stderr, "sensor_node: read_temp -> %.3f\n", t);
    }
    return (float)t;
}

static void host_set_led(void *ctx, int on)
{
    host_t *h = (host_t *)ctx;
    if (h->verbose) {
        fprintf(stderr, "sensor_node: set_led(%s)\n", on ? "true" : "false");
    }
}

static int set_raw(int fd)
{
    struct termios t;
    if (tcgetattr(fd, &t) != 0) {
        return -1;
    }
    t.c_iflag &= (tcflag_t) ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXOFF);
    t.c_oflag &= (tcflag_t)~OPOST;
    t.c_lflag &= (tcflag_t) ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    t.c_cflag &= (tcflag_t) ~(CSIZE | PARENB | CSTOPB);
    t.c_cflag |= (tcflag_t)(CS8 | CLOCAL | CREAD);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    cfsetispeed(&t, B115200);
    cfsetospeed(&t, B115200);
    return tcsetattr(fd, TCSANOW, &t);
}

static void usage(void)
{
    fprintf(stderr, "usage: sensor_node DEVICE [--button-every SEC] [--temp C] [--temp-noise C] "
                    "[--temp-drift C] [--seed N] [--device-id ID] [--verbose]\n");
}

int main(int argc, char **argv)
{
    static sensor_node_t sn;
    host_t h;
    lgb_io_t io;
    sn_hw_t hw;
    struct sigaction sa;
    const char *path = NULL;
    const char *device_id = NULL;
    const char *env;
    double button_every = 0;
    uint32_t next_button;
    int hangups = 0;
    int i;

    memset(&h, 0, sizeof(h));
    h.temp = 21.5;
    h.seed = 1;
    env = getenv("SN_BUTTON_EVERY");
    if (env != NULL && *env != '\0') {
        button_every = atof(env);
    }
    env = getenv("SN_TEMP");
    if (env != NULL && *env != '\0') {
        h.temp = atof(env);
    }
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            h.verbose = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 0;
        } else if (a[0] == '-' && a[1] == '-' && v == NULL) {
            fprintf(stderr, "sensor_node: option %s needs a value\n", a);
            return 1;
        } else if (strcmp(a, "--button-every") == 0) {
            button_every = atof(v);
            i++;
        } else if (strcmp(a, "--temp") == 0) {
            h.temp = atof(v);
            i++;
        } else if (strcmp(a, "--temp-noise") == 0) {
            h.noise = atof(v);
            i++;
        } else if (strcmp(a, "--temp-drift") == 0) {
            h.drift = atof(v);
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            h.seed = strtoul(v, NULL, 10);
            i++;
        } else if (strcmp(a, "--device-id") == 0) {
            device_id = v;
            i++;
        } else if (a[0] == '-') {
            fprintf(stderr, "sensor_node: unknown option %s\n", a);
            usage();
            return 1;
        } else if (path == NULL) {
            path = a;
        } else {
            usage();
            return 1;
        }
    }
    if (path == NULL) {
        usage();
        return 1;
    }

    h.fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK);
    if (h.fd < 0) {
        fprintf(stderr, "sensor_node: opening %s: %s\n", path, strerror(errno));
        return 2;
    }
    if (set_raw(h.fd) != 0 && h.verbose) {
        fprintf(stderr, "sensor_node: %s is not a terminal (%s); using it as is\n", path, strerror(errno));
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    io.write = host_write;
    io.now_ms = host_now_ms;
    io.ctx = &h;
    hw.read_temp = host_read_temp;
    hw.set_led = host_set_led;
    hw.ctx = &h;
    if (sensor_node_init(&sn, &io, &hw, LGB_LINK_COBS, device_id) != LGB_OK) {
        fprintf(stderr, "sensor_node: link setup failed\n");
        return 1;
    }
    if (h.verbose) {
        fprintf(stderr, "sensor_node: running on %s\n", path);
    }
    next_button = host_now_ms(NULL) + (uint32_t)(button_every * 1000.0);

    while (!stop_requested) {
        struct pollfd p;
        uint8_t buf[LGB_RX_RING_SIZE];
        int pr;
        p.fd = h.fd;
        p.events = POLLIN;
        p.revents = 0;
        pr = poll(&p, 1, 2);
        if (pr > 0 && (p.revents & POLLIN)) {
            /* Like a UART ISR: bytes go through the ring buffer; read no more
             * than it holds before the main loop drains it. */
            for (;;) {
                ssize_t n = read(h.fd, buf, sizeof(buf));
                ssize_t k;
                if (n <= 0) {
                    if (n < 0 && errno != EAGAIN && errno != EINTR) {
                        fprintf(stderr, "sensor_node: reading %s: %s\n", path, strerror(errno));
                        return 3;
                    }
                    break;
                }
                for (k = 0; k < n; k++) {
                    sensor_node_rx_byte(&sn, buf[k]);
                }
                sensor_node_step(&sn);
            }
        } else if (pr > 0 && (p.revents & (POLLHUP | POLLERR))) {
            /* The other side closed the line. Give it 2 s (a serial adapter
             * being re-plugged), then exit: a pty whose master is gone for good
             * will not come back. */
            struct timespec ts = {0, 20000000L};
            nanosleep(&ts, NULL);
            if (++hangups > 100) {
                fprintf(stderr, "sensor_node: %s hung up\n", path);
                return 3;
            }
            continue;
        }
        hangups = 0;
        if (button_signal != 0) {
            sensor_node_button(&sn, button_signal == 1);
            button_signal = 0;
        }
        if (button_every > 0 && (int32_t)(host_now_ms(NULL) - next_button) >= 0) {
            sensor_node_button(&sn, 1);
            next_button += (uint32_t)(button_every * 1000.0);
        }
        sensor_node_step(&sn);
    }
    if (h.verbose) {
        fprintf(stderr, "sensor_node: exiting (calls %lu, events sent %lu, failed %lu)\n",
                (unsigned long)sn.link.stats.calls, (unsigned long)sn.events_sent, (unsigned long)sn.events_failed);
    }
    close(h.fd);
    return 0;
}

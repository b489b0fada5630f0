/* A bouncing ball: h' = v, v' = -g; when it reaches the floor falling
 * (h <= 0, v < 0) it bounces, h := 0, v := -e v, and comes to rest when
 * the bounce is slower than BALL_V_MIN. Shared by the FMI 2 and FMI 3
 * bouncing balls. */
#ifndef TANDEM_BALL_H
#define TANDEM_BALL_H

#define BALL_V_MIN 1e-3

typedef struct {
    double h, v, g, e;
    int resting;
} Ball;

static inline void ball_init(Ball *b) {
    b->h = 1.0;
    b->v = 0.0;
    b->g = 9.81;
    b->e = 0.7;
    b->resting = 0;
}

static inline double ball_der_h(const Ball *b) { return b->resting ? 0.0 : b->v; }

static inline double ball_der_v(const Ball *b) { return b->resting ? 0.0 : -b->g; }

/* The event indicator: the height, positive while in flight (and at rest,
 * so that a ball lying on the floor raises no event). */
static inline double ball_indicator(const Ball *b) { return b->resting ? 1.0 : b->h; }

/* Applies an impact, if one is due; returns whether the states changed. */
static inline int ball_event(Ball *b) {
    if (b->resting || b->h > 0.0 || b->v >= 0.0) {
        return 0;
    }
    b->h = 0.0;
    b->v = -b->e * b->v;
    if (b->v < BALL_V_MIN) {
        b->v = 0.0;
        b->resting = 1;
    }
    return 1;
}

#endif

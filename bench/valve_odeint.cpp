// valve_odeint.cpp — the pressure-relief-valve ensemble (the MPGOS benchmark) written the way a
// typical boost::odeint user writes it, as the peer twofold is timed against: Cash–Karp 5(4)
// in a controlled stepper, try_step in a loop, and events found by bisection on re-tried fixed
// steps from the saved state (odeint has no event location of its own).
//
//   bench_valve_odeint q_min q_max n_q [out.csv]
//
// Model and protocol as tests/scripts/valve_ref.py (the independent reference):
//   x' = v, v' = -kappa v - (x + delta) + p, p' = beta (q - x sqrt(p)),
//   kappa 1.25, beta 20, delta 10, start (0.2, 0, 0), q on a uniform grid of n_q points;
//   events: impact (x reaches 0 with v < 0: v -> -0.8 v, x placed on the seat) and extrema of x
//   (v changes sign); an impact slower than 1e-6 while p < delta ends a chatter sequence: the
//   valve rests on the seat (p' = beta q) until p = delta; 2048 transient events, then x at the
//   next 64 events; two consecutive extrema within 1e-9: stationary, stop early.
//   Tolerances 1e-9 (abs and rel); event times bisected to 1e-10.
// stdout: one JSON line (trajectories, events, steps, wall and CPU seconds, trajectories per
// CPU second = per core: the code is serial).  out.csv: q,converged,n,x_1..x_n per q.
#include <algorithm>
#include <array>
#include <boost/numeric/odeint.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

// make_controlled copies a fresh stepper whose scratch arrays are not initialised yet (they are
// written before every use); GCC 12 flags that copy inside Boost 1.74's headers.
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace odeint = boost::numeric::odeint;
typedef std::array<double, 3> state;

static const double kappa = 1.25, beta = 20.0, delta = 10.0, r = 0.8;
static const double v_stick = 1e-6, conv = 1e-9, t_tol = 1e-10, tol = 1e-9;
static const double t_quiet = 1e4;  // never reached for q in [0.2, 10]
static const int transient = 2048, n_rec = 64;

struct valve {
  double q;
  void operator()(const state &y, state &dy, double) const {
    dy[0] = y[1];
    dy[1] = -kappa * y[1] - (y[0] + delta) + y[2];
    dy[2] = beta * (q - y[0] * std::sqrt(std::max(y[2], 0.0)));
  }
};

struct result {
  std::vector<double> x;
  bool converged = false;
  long events = 0, steps = 0;
};

static int sgn(double v) {
  return (v > 0) - (v < 0);
}

static result run(double q) {
  valve sys{q};
  auto stepper = odeint::make_controlled(tol, tol, odeint::runge_kutta_cash_karp54<state>());
  state y = {0.2, 0.0, 0.0};
  double t = 0.0, dt = 1e-3, last_event_t = 0.0;
  result res;
  int last_kind = 0;  // 0 none, 1 impact, 2 extremum
  double last_x = 0.0, last_ext = 0.0;
  // sign of v right after a start where v = 0 (initial point: v' < 0; lift-off: v'' > 0)
  int vs = -1;

  auto event = [&](int kind, double xe) -> bool {  // true: stop
    ++res.events;
    if (res.events > transient) res.x.push_back(xe);
    bool c = kind == 2 && last_kind == 2 && std::fabs(xe - last_x) < conv;
    last_kind = kind;
    last_x = xe;
    if (kind == 2) last_ext = xe;
    if (c) {
      res.converged = true;
      if (res.x.empty()) res.x.push_back(last_ext);
      return true;
    }
    return (int)res.x.size() >= n_rec;
  };

  for (;;) {
    const state y0 = y;
    const double t0 = t;
    const int s0 = y0[1] != 0.0 ? sgn(y0[1]) : vs;
    if (stepper.try_step(sys, y, t, dt) != odeint::success) continue;  // dt was reduced
    ++res.steps;
    auto crossed = [&](const state &z) { return z[0] < 0.0 || sgn(z[1]) == -s0; };
    if (!crossed(y)) {
      if (t - last_event_t > t_quiet) {
        std::fprintf(stderr, "valve_odeint: q = %g: no event for %g time units\n", q, t_quiet);
        std::exit(1);
      }
      continue;
    }
    // bisection on the step length, re-trying fixed steps from the saved state
    double lo = 0.0, hi = t - t0;
    state z;
    while (hi - lo > t_tol) {
      double mid = 0.5 * (lo + hi);
      stepper.stepper().do_step(sys, y0, t0, z, mid);
      (crossed(z) ? hi : lo) = mid;
    }
    stepper.stepper().do_step(sys, y0, t0, z, hi);
    t = t0 + hi;
    y = z;
    if (y[0] < 0.0) {  // impact
      double vin = y[1];
      y[0] = 0.0;
      if (event(1, 0.0)) return res;
      if (-vin < v_stick && y[2] < delta) {  // chatter has accumulated: rest on the seat
        t += (delta - y[2]) / (beta * q);
        y = {0.0, 0.0, delta};
        vs = 1;
      } else {
        y[1] = -r * vin;
      }
    } else {  // extremum of x (z is just past it: v already has its new sign)
      if (event(2, y[0])) return res;
    }
    last_event_t = t;
  }
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s q_min q_max n_q [out.csv]\n", argv[0]);
    return 2;
  }
  char *e1, *e2, *e3;
  double qmin = std::strtod(argv[1], &e1), qmax = std::strtod(argv[2], &e2);
  long nq = std::strtol(argv[3], &e3, 10);
  if (*e1 || *e2 || *e3 || nq < 1 || !(qmin > 0) || !(qmax >= qmin)) {
    std::fprintf(stderr, "%s: need 0 < q_min <= q_max and n_q >= 1 (got %s %s %s)\n", argv[0],
                 argv[1], argv[2], argv[3]);
    return 2;
  }
  FILE *out = nullptr;
  if (argc == 5 && !(out = std::fopen(argv[4], "w"))) {
    std::perror(argv[4]);
    return 1;
  }
  if (out) std::fprintf(out, "q,converged,n,x\n");
  long events = 0, steps = 0, converged = 0;
  auto w0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();
  for (long i = 0; i < nq; ++i) {
    double q = nq == 1 ? qmin : qmin + (qmax - qmin) * (double)i / (double)(nq - 1);
    result res = run(q);
    events += res.events;
    steps += res.steps;
    converged += res.converged;
    if (out) {
      std::fprintf(out, "%.17g,%d,%zu", q, (int)res.converged, res.x.size());
      for (double v : res.x) std::fprintf(out, ",%.17g", v);
      std::fprintf(out, "\n");
    }
  }
  double cpu = (double)(std::clock() - c0) / CLOCKS_PER_SEC;
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  if (out && std::fclose(out) != 0) {
    std::perror(argv[4]);
    return 1;
  }
  std::printf(
      "{\"code\": \"odeint runge_kutta_cash_karp54, controlled, bisection events\", "
      "\"trajectories\": %ld, \"converged\": %ld, \"events\": %ld, \"steps\": %ld, "
      "\"wall_seconds\": %.6g, \"cpu_seconds\": %.6g, \"trajectories_per_second\": %.6g, "
      "\"trajectories_per_cpu_second\": %.6g}\n",
      nq, converged, events, steps, wall, cpu, nq / wall, nq / cpu);
  return 0;
}

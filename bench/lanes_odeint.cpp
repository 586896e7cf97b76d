// lanes_odeint.cpp — the Lorenz ensemble of bench/lanes_bench.py written the way a typical
// boost::odeint user writes it, as the peer twofold's lanes are timed against: Dormand–Prince
// 5(4) in a controlled stepper (integrate_adaptive), one member after another, from the initial
// states twofold drew (so both integrate the same members), at the same tolerances.
//
//   bench_lanes_odeint t_end rtol atol < initial_states.txt   (one member a line: x y z)
// stdout: one JSON line (members, steps, CPU seconds, members per CPU second = per core: the
// code is serial; reading the states is outside the timing).
#include <array>
#include <boost/numeric/odeint.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#pragma GCC diagnostic ignored "-Wuninitialized"  // Boost 1.74's copied steppers (valve_odeint)

namespace odeint = boost::numeric::odeint;
typedef std::array<double, 3> state;

static void lorenz(const state &x, state &dx, double) {
  const double sigma = 10.0, rho = 28.0, beta = 8.0 / 3.0;
  dx[0] = sigma * (x[1] - x[0]);
  dx[1] = x[0] * (rho - x[2]) - x[1];
  dx[2] = x[0] * x[1] - beta * x[2];
}

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bench_lanes_odeint t_end rtol atol < states\n");
    return 2;
  }
  const double t_end = std::atof(argv[1]), rtol = std::atof(argv[2]), atol = std::atof(argv[3]);
  std::vector<state> xs;
  state x;
  while (std::scanf("%lf %lf %lf", &x[0], &x[1], &x[2]) == 3) xs.push_back(x);
  const std::clock_t c0 = std::clock();
  long steps = 0;
  double check = 0.0;
  for (state s : xs) {
    steps += odeint::integrate_adaptive(
        odeint::make_controlled<odeint::runge_kutta_dopri5<state>>(atol, rtol), lorenz, s, 0.0,
        t_end, 1e-3);
    check += s[0];
  }
  const double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("{\"members\": %zu, \"steps\": %ld, \"cpu_seconds\": %.6f, "
              "\"members_per_cpu_second\": %.3f, \"sum_x\": %.17g}\n",
              xs.size(), steps, cpu, xs.size() / cpu, check);
  return 0;
}

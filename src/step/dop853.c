/* dop853.c — Dormand & Prince's explicit Runge–Kutta pair of order 8 with error estimators of
 * orders 5 and 3 and a 7th-order continuous extension, as in Hairer's DOP853 (Hairer, Nørsett &
 * Wanner, "Solving ODEs I", 2nd ed., sec. II.10).  At tolerances of 1e-9 and below it takes a
 * fraction of DOPRI5's steps for 12 evaluations each (+3 for the dense output), which is why
 * event-driven runs at tight tolerances use it.  The step control is ode.c's; this file is
 * the tableau, its stages unrolled over the sparse rows (results are pinned bit for bit).
 * Coefficients are the published ones in double precision; the unit test checks them against the
 * order conditions. */
#include <math.h>

#include <stddef.h>

#include "rk_driver.h"

static const double c[16] = {0.0,
                             0.05260015195876773,
                             0.0789002279381516,
                             0.1183503419072274,
                             0.2816496580927726,
                             0.3333333333333333,
                             0.25,
                             0.3076923076923077,
                             0.6512820512820513,
                             0.6,
                             0.8571428571428571,
                             1.0,
                             1.0,
                             0.1,
                             0.2,
                             0.7777777777777778};

/* Stage s = x + h sum_j a_sj k_j over the nonzero a_sj only (most of the 16 x 16 are 0). */
static const struct {
  int nk, j[9];
  double a[9];
} row[16] = {
    {0, {0}, {0}},
    /* stage 1 */ {1, {0}, {0.05260015195876773}},
    /* stage 2 */ {2, {0, 1}, {0.0197250569845379, 0.0591751709536137}},
    /* stage 3 */ {2, {0, 2}, {0.02958758547680685, 0.08876275643042054}},
    /* stage 4 */ {3, {0, 2, 3}, {0.2413651341592667, -0.8845494793282861, 0.924834003261792}},
    /* stage 5 */ {3, {0, 3, 4}, {0.037037037037037035, 0.17082860872947386, 0.12546768756682242}},
    /* stage 6 */
    {4, {0, 3, 4, 5}, {0.037109375, 0.17025221101954405, 0.06021653898045596, -0.017578125}},
    /* stage 7 */
    {5,
     {0, 3, 4, 5, 6},
     {0.03709200011850479, 0.17038392571223998, 0.10726203044637328, -0.015319437748624402,
      0.008273789163814023}},
    /* stage 8 */
    {6,
     {0, 3, 4, 5, 6, 7},
     {0.6241109587160757, -3.3608926294469414, -0.868219346841726, 27.59209969944671,
      20.154067550477894, -43.48988418106996}},
    /* stage 9 */
    {7,
     {0, 3, 4, 5, 6, 7, 8},
     {0.47766253643826434, -2.4881146199716677, -0.590290826836843, 21.230051448181193,
      15.279233632882423, -33.28821096898486, -0.020331201708508627}},
    /* stage 10 */
    {8,
     {0, 3, 4, 5, 6, 7, 8, 9},
     {-0.9371424300859873, 5.186372428844064, 1.0914373489967295, -8.149787010746927,
      -18.52006565999696, 22.739487099350505, 2.4936055526796523, -3.0467644718982196}},
    /* stage 11 */
    {9,
     {0, 3, 4, 5, 6, 7, 8, 9, 10},
     {2.273310147516538, -10.53449546673725, -2.0008720582248625, -17.9589318631188,
      27.94888452941996, -2.8589982771350235, -8.87285693353063, 12.360567175794303,
      0.6433927460157636}},
    /* stage 12 */
    {8,
     {0, 5, 6, 7, 8, 9, 10, 11},
     {0.054293734116568765, 4.450312892752409, 1.8915178993145003, -5.801203960010585,
      0.3111643669578199, -0.1521609496625161, 0.20136540080403034, 0.04471061572777259}},
    /* stage 13 */
    {8,
     {0, 6, 7, 8, 9, 10, 11, 12},
     {0.056167502283047954, 0.25350021021662483, -0.2462390374708025, -0.12419142326381637,
      0.15329179827876568, 0.00820105229563469, 0.007567897660545699, -0.008298}},
    /* stage 14 */
    {8,
     {0, 5, 6, 7, 10, 11, 12, 13},
     {0.03183464816350214, 0.028300909672366776, 0.053541988307438566, -0.05492374857139099,
      -0.00010834732869724932, 0.0003825710908356584, -0.00034046500868740456, 0.1413124436746325}},
    /* stage 15 */
    {8,
     {0, 5, 6, 7, 8, 12, 13, 14},
     {-0.42889630158379194, -4.697621415361164, 7.683421196062599, 4.06898981839711,
      0.3567271874552811, -0.0013990241651590145, 2.9475147891527724, -9.15095847217987}},
};

static const int err_k[8] = {0, 5, 6, 7, 8, 9, 10, 11};
static const double e5[8] = {0.01312004499419488, -1.2251564463762044,  -0.4957589496572502,
                             1.6643771824549864,  -0.35032884874997366, 0.3341791187130175,
                             0.08192320648511571, -0.022355307863886294};
static const double e3[8] = {-0.18980075407240762, 4.450312892752409,   1.8915178993145003,
                             -5.801203960010585,   -0.4226823213237919, -0.1521609496625161,
                             0.20136540080403034,  0.02265179219836082};

static const int dense_k[12] = {0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static const double dcoef[4][12] = {
    {-8.428938276109013, 0.5667149535193777, -3.0689499459498917, 2.38466765651207,
     2.117034582445028, -0.871391583777973, 2.2404374302607883, 0.6315787787694688,
     -0.08899033645133331, 18.148505520854727, -9.194632392478356, -4.436036387594894},
    {10.427508642579134, 242.28349177525817, 165.20045171727028, -374.5467547226902,
     -22.113666853125306, 7.733432668472264, -30.674084731089398, -9.332130526430229,
     15.697238121770845, -31.139403219565178, -9.35292435884448, 35.81684148639408},
    {19.985053242002433, -387.0373087493518, -189.17813819516758, 527.8081592054236,
     -11.57390253995963, 6.8812326946963, -1.0006050966910838, 0.7777137798053443,
     -2.778205752353508, -60.19669523126412, 84.32040550667716, 11.99229113618279},
    {-25.69393346270375, -154.18974869023643, -231.5293791760455, 357.6391179106141,
     93.40532418362432, -37.45832313645163, 104.0996495089623, 29.8402934266605, -43.53345659001114,
     96.32455395918828, -39.17726167561544, -149.72683625798564},
};

/* Inlined with s a constant: the row's loop unrolls and its coefficients become immediates. */
static inline __attribute__((always_inline)) void stage(tf_stepper *st, const double *x, double h,
                                                        int s) {
  for (size_t i = 0; i < st->n; i++) {
    double acc = 0.0;
    for (int q = 0; q < row[s].nk; q++) acc += row[s].a[q] * st->k[row[s].j[q]][i];
    st->stage[i] = x[i] + h * acc;
  }
}

/* attempt and error_measure are not inlined into the driver's step: their unrolled loops are
 * large, and inlined there they cost more than the call */
static __attribute__((noinline)) void attempt(tf_stepper *st, double t, const double *x, double h) {
#pragma GCC unroll 12
  for (int s = 1; s < 12; s++) {
    stage(st, x, h, s);
    tf_rk_eval(st, t + c[s] * h, st->stage, st->k[s]);
  }
  stage(st, x, h, 12); /* row 12 holds the weights of the 8th-order solution */
  for (size_t i = 0; i < st->n; i++) st->x_new[i] = st->stage[i];
  tf_rk_eval(st, t + h, st->x_new, st->k[12]);
}

static __attribute__((noinline)) double error_measure(const tf_stepper *st, const double *x,
                                                      double h) {
  double sum5 = 0.0, sum3 = 0.0;
  for (size_t i = 0; i < st->n; i++) {
    const double a0 = fabs(x[i]), a1 = fabs(st->x_new[i]);
    const double scale = st->opt.atol + st->opt.rtol * (a0 > a1 ? a0 : a1);
    double err5 = 0.0, err3 = 0.0;
    for (int q = 0; q < 8; q++) {
      err5 += e5[q] * st->k[err_k[q]][i];
      err3 += e3[q] * st->k[err_k[q]][i];
    }
    sum5 += (err5 / scale) * (err5 / scale);
    sum3 += (err3 / scale) * (err3 / scale);
  }
  /* Hairer's combination: the 5th-order estimate, damped where the 3rd-order one is large */
  double denom = sum5 + 0.01 * sum3;
  if (!(denom > 0.0)) denom = 1.0;
  return fabs(h) * sum5 / sqrt(denom * (double)st->n);
}

static void build_dense(tf_stepper *st, double t, const double *x, double h) {
#pragma GCC unroll 3
  for (int s = 13; s < 16; s++) {
    stage(st, x, h, s);
    tf_rk_eval(st, t + c[s] * h, st->stage, st->k[s]);
  }
  for (size_t i = 0; i < st->n; i++) {
    const double dx = st->x_new[i] - x[i];
    st->cont[0][i] = x[i];
    st->cont[1][i] = dx;
    st->cont[2][i] = h * st->k[0][i] - dx;
    st->cont[3][i] = 2.0 * dx - h * (st->k[12][i] + st->k[0][i]);
    for (int r = 0; r < 4; r++) {
      double acc = 0.0;
      for (int q = 0; q < 12; q++) acc += dcoef[r][q] * st->k[dense_k[q]][i];
      st->cont[4 + r][i] = h * acc;
    }
  }
}

static void build_dense_late(tf_stepper *st) {
  double *f1 = st->k[0];
  st->k[0] = st->k[12], st->k[12] = f1;
  build_dense(st, st->t_prev, st->cont[0], st->h_prev);
  st->k[12] = st->k[0], st->k[0] = f1;
  st->dense_state = TF_DENSE_READY;
}

static void dense_at(const tf_stepper *st, double theta, double *out) {
  const double t1 = 1.0 - theta;
  for (size_t i = 0; i < st->n; i++) {
    double y = st->cont[7][i];
    y = st->cont[6][i] + theta * y;
    y = st->cont[5][i] + t1 * y;
    y = st->cont[4][i] + theta * y;
    y = st->cont[3][i] + t1 * y;
    y = st->cont[2][i] + theta * y;
    y = st->cont[1][i] + t1 * y;
    out[i] = st->cont[0][i] + theta * y;
  }
}

/* The extension is lazy (build NULL): tf_rk_dense builds it on first use. */
static tf_ode_status step(tf_stepper *s, double *t, double *x, double t_limit) {
  return tf_rk_step_with(s, t, x, t_limit, s->n, attempt, error_measure, NULL);
}

static bool sample_is_exact(const tf_stepper *s) {
  return s->dense_state == TF_DENSE_READY;
}

/* The cubic Hermite interpolant until the extension is built (its 3 evaluations are spent only
 * where an event needs it). */
static void sample(const tf_stepper *s, double t, double *out) {
  if (s->dense_state == TF_DENSE_READY)
    tf_rk_dense(s, t, out);
  else
    tf_rk_hermite(s, t, 12, out);
}

static const tf_stepper_ops ops = {
    .reset = tf_rk_reset,
    .restart = tf_rk_restart,
    .step = step,
    .dense = tf_rk_dense,
    .sample = sample,
    .sample_is_exact = sample_is_exact,
};

const tf_stepper_type tf_stepper_dop853 = {
    .name = "dop853",
    .order = 8,
    .error_order = 5,
    .evals_per_step = 12,
    .dense_evals = 3,
    /* its cheap samples are the cubic Hermite interpolant, which can step over a pair of sign
     * changes the 7th-order extension would show */
    .samples_per_step = 8,
    .fsal_stage = 12,
    .smooth_only = true,
    .control = {.safety = 0.9,
                .expo1 = 1.0 / 8.0,
                .beta = 0.0,
                .fac_lo = 1.0 / 6.0,
                .fac_hi = 1.0 / 0.333,
                .start_order = 8.0},
    .lazy_dense = true,
    .build_dense_late = build_dense_late,
    .dense_at = dense_at,
    .ops = &ops,
};

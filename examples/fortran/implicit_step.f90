! A small Fortran implicit solver step with adi (the Fortran module on the C API):
!  1. five coupled species u(5, nx) on each of ny lines, one implicit Euler step of
!     u_t = D u_xx - K u: a block-tridiagonal solve on 5x5 blocks stored column-major,
!     A(5, 5, nx, ny), exactly as a CFD code stores them (no transposed copy);
!  2. one implicit diffusion step along y of a 2-D field v(nx, ny) (a tridiagonal solve
!     along the second index of the caller's array).
! Checks both answers against their equations and stops with status 1 if one is wrong.
program implicit_step
  use adi
  implicit none
  integer, parameter :: m = 5, nx = 64, ny = 33
  real(8), parameter :: dt = 1d-3, h = 1d0 / (nx - 1)
  type(adi_executor) :: ex
  type(adi_block_plan) :: blocks
  type(adi_tridiagonal_plan) :: lines
  real(8) :: A(m, m, nx, ny), B(m, m, nx, ny), C(m, m, nx, ny), u(m, nx, ny), rhs(m, nx, ny)
  real(8) :: D(m), K(m, m), r(m), worst
  real(8) :: aa(nx, ny), bb(nx, ny), cc(nx, ny), v(nx, ny), w(nx, ny), res
  integer :: i, j, s, p

  call adi_check(adi_host_executor(ex))
  ! Step 1: the 5x5 block lines (diffusion D, coupling K between the species).
  D = [1d0, 0.5d0, 2d0, 0.1d0, 1d0]
  do p = 1, m
    do s = 1, m
      K(p, s) = merge(3d0, 0.2d0 * (p - s), p == s)
    end do
  end do
  do s = 1, ny
    do i = 1, nx
      A(:, :, i, s) = 0; C(:, :, i, s) = 0
      B(:, :, i, s) = dt * K
      do p = 1, m
        A(p, p, i, s) = -dt * D(p) / h**2
        C(p, p, i, s) = -dt * D(p) / h**2
        B(p, p, i, s) = B(p, p, i, s) + 1 + 2 * dt * D(p) / h**2
        rhs(p, i, s) = sin(3.14159265d0 * (i - 1) * h) * p + 0.01d0 * s
      end do
    end do
  end do
  call adi_check(blocks%create(ex, m, nx, ny))          ! column-major blocks, fp64 (defaults)
  call adi_check(blocks%solve(A, B, C, rhs, u))
  worst = 0
  do s = 1, ny
    do i = 1, nx
      r = matmul(B(:, :, i, s), u(:, i, s)) - rhs(:, i, s)
      if (i > 1) r = r + matmul(A(:, :, i, s), u(:, i - 1, s))
      if (i < nx) r = r + matmul(C(:, :, i, s), u(:, i + 1, s))
      worst = max(worst, maxval(abs(r)))
    end do
  end do
  print '(a, i0, a, i0, a, es9.2)', 'block step: ', ny, ' lines of ', nx, ' 5x5 blocks, residual ', worst
  if (.not. worst < 1d-10) error stop 1

  ! Step 2: implicit diffusion along y of v(nx, ny): (1 - dt d_yy) w = v, w = 0 beyond the ends.
  do j = 1, ny
    do i = 1, nx
      v(i, j) = cos(0.1d0 * i) * j
    end do
  end do
  aa = -dt / h**2; cc = -dt / h**2; bb = 1 + 2 * dt / h**2   ! bands in the layout of v
  call adi_check(lines%create_box(ex, nx, ny, 1, ADI_AXIS_Y))   ! the lines along v's second index
  call adi_check(lines%solve(aa, bb, cc, v, w))
  worst = 0
  do j = 1, ny
    do i = 1, nx
      res = (1 + 2 * dt / h**2) * w(i, j) - v(i, j)
      if (j > 1) res = res - dt / h**2 * w(i, j - 1)
      if (j < ny) res = res - dt / h**2 * w(i, j + 1)
      worst = max(worst, abs(res))
    end do
  end do
  print '(a, i0, a, a, a, es9.2)', 'tridiagonal step along y: ', nx, ' lines, kernel ', lines%kernel(), &
    ', residual ', worst
  if (.not. worst < 1d-10) error stop 1
end program

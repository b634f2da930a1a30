! The Fortran module adi (bindings/fortran/adi.f90) on the caller's arrays: tridiagonal
! solves (fp64 and fp32, columns of a 2-D array, lines along z of a 3-D array, periodic),
! column-major blocks against the row-major option and the residual, the large-system,
! variable-size, Cholesky and Hines plans, the heat solver, and the error paths (bad sizes,
! wrong precision, singular block with system/row, CUDA without a device). Prints one line
! per check and stops with status 1 when any fails.
program test_adi_fortran
  use adi
  use, intrinsic :: iso_c_binding
  implicit none
  type(adi_executor) :: ex, cuda
  integer :: failures = 0

  call adi_check(adi_host_executor(ex, 2))
  call tridiagonal_columns()
  call tridiagonal_z_periodic()
  call blocks()
  call large()
  call variable()
  call cholesky()
  call hines()
  call heat()
  call errors()
  if (failures > 0) then
    print '(i0, a)', failures, ' check(s) FAILED'
    error stop 1
  end if
  print '(a)', 'all Fortran checks passed'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      print '(a, a)', 'ok      ', what
    else
      print '(a, a, a, a)', 'FAILED  ', what, ': ', adi_error_message()
      failures = failures + 1
    end if
  end subroutine

  subroutine tridiagonal_columns()
    integer, parameter :: n = 33, count = 31
    type(adi_tridiagonal_plan) :: p64, p32
    real(8) :: a(n, count), b(n, count), c(n, count), d(n, count), u(n, count), r
    real(4) :: a4(n, count), b4(n, count), c4(n, count), d4(n, count), u4(n, count)
    integer :: i, s
    real(8) :: worst
    call random_number(a); call random_number(c); call random_number(d)
    b = 3 + a
    a4 = real(a, 4); b4 = real(b, 4); c4 = real(c, 4); d4 = real(d, 4)
    call check(p64%create_strided(ex, n, count) == ADI_SUCCESS, 'tridiagonal plan fp64 (columns)')
    call check(p32%create_strided(ex, n, count, precision=ADI_FLOAT32) == ADI_SUCCESS, 'tridiagonal plan fp32')
    call check(p64%solve(a, b, c, d, u) == ADI_SUCCESS, 'tridiagonal solve fp64')
    call check(p32%solve(a4, b4, c4, d4, u4) == ADI_SUCCESS, 'tridiagonal solve fp32')
    worst = 0
    do s = 1, count
      do i = 1, n
        r = b(i, s) * u(i, s) - d(i, s)
        if (i > 1) r = r + a(i, s) * u(i - 1, s)
        if (i < n) r = r + c(i, s) * u(i + 1, s)
        worst = max(worst, abs(r))
      end do
    end do
    call check(worst < 1d-12, 'tridiagonal fp64 residual')
    call check(maxval(abs(u4 - u)) < 1e-5, 'tridiagonal fp32 against fp64')
    call check(len(p64%kernel()) > 0, 'kernel name '//p64%kernel())
    ! In place: u is d.
    u = d
    call check(p64%solve(a, b, c, u, u) == ADI_SUCCESS, 'tridiagonal in place')
  end subroutine

  subroutine tridiagonal_z_periodic()
    integer, parameter :: nx = 5, ny = 3, nz = 17
    type(adi_tridiagonal_plan) :: p
    real(8) :: a(nz), b(nz), c(nz), d(nx, ny, nz), u(nx, ny, nz), r, worst
    integer :: i, j, k, km, kp
    a = -1; c = -1; b = 4
    call random_number(d)
    call check(p%create_box(ex, nx, ny, nz, ADI_AXIS_Z, periodic=.true.) == ADI_SUCCESS, 'box plan along z, periodic')
    call check(p%solve_shared(a, b, c, d, u) == ADI_SUCCESS, 'shared-band solve along z')
    worst = 0
    do k = 1, nz
      km = merge(nz, k - 1, k == 1); kp = merge(1, k + 1, k == nz)
      do j = 1, ny
        do i = 1, nx
          r = 4 * u(i, j, k) - u(i, j, km) - u(i, j, kp) - d(i, j, k)
          worst = max(worst, abs(r))
        end do
      end do
    end do
    call check(worst < 1d-12, 'periodic lines along z residual')
  end subroutine

  subroutine blocks()
    integer, parameter :: m = 5, n = 31, ns = 7
    type(adi_block_plan) :: col, row
    real(8) :: A(m, m, n, ns), B(m, m, n, ns), C(m, m, n, ns), d(m, n, ns), u(m, n, ns), ur(m, n, ns)
    real(8) :: At(m, m, n, ns), Bt(m, m, n, ns), Ct(m, m, n, ns), r(m), worst
    real(4) :: A4(m, m, n, ns), B4(m, m, n, ns), C4(m, m, n, ns), d4(m, n, ns), u4(m, n, ns)
    integer :: i, s, q
    call random_number(A); call random_number(B); call random_number(C); call random_number(d)
    A = (A - 0.5d0) / m; C = (C - 0.5d0) / m; B = (B - 0.5d0) / m
    do s = 1, ns
      do i = 1, n
        do q = 1, m
          B(q, q, i, s) = B(q, q, i, s) + 4
        end do
        At(:, :, i, s) = transpose(A(:, :, i, s)); Bt(:, :, i, s) = transpose(B(:, :, i, s))
        Ct(:, :, i, s) = transpose(C(:, :, i, s))
      end do
    end do
    call check(col%create(ex, m, n, ns) == ADI_SUCCESS, 'block plan, column-major (default)')
    call check(col%solve(A, B, C, d, u) == ADI_SUCCESS, 'block solve, column-major 5x5')
    worst = 0
    do s = 1, ns
      do i = 1, n
        r = matmul(B(:, :, i, s), u(:, i, s)) - d(:, i, s)
        if (i > 1) r = r + matmul(A(:, :, i, s), u(:, i - 1, s))
        if (i < n) r = r + matmul(C(:, :, i, s), u(:, i + 1, s))
        worst = max(worst, maxval(abs(r)))
      end do
    end do
    call check(worst < 1d-12, 'column-major block residual')
    call check(row%create(ex, m, n, ns, order=ADI_ROW_MAJOR) == ADI_SUCCESS, 'block plan, row-major')
    call check(row%solve(At, Bt, Ct, d, ur) == ADI_SUCCESS, 'block solve, row-major (transposed blocks)')
    call check(maxval(abs(ur - u)) < 1d-12, 'row-major result equals column-major')
    A4 = real(A, 4); B4 = real(B, 4); C4 = real(C, 4); d4 = real(d, 4)
    call check(col%create(ex, m, n, ns, precision=ADI_FLOAT32) == ADI_SUCCESS, 'block plan fp32')
    call check(col%solve(A4, B4, C4, d4, u4) == ADI_SUCCESS, 'block solve fp32')
    call check(maxval(abs(u4 - u)) < 1e-4, 'block fp32 against fp64')
    ! Singular block: system 3 (0-based 2), block row 5 (0-based 4).
    call check(col%create(ex, m, n, ns) == ADI_SUCCESS, 'block plan again')
    B(:, :, 5, 3) = 0; A(:, :, 5, 3) = 0
    call check(col%solve(A, B, C, d, u) == ADI_ERROR_SINGULAR_SYSTEM, 'singular block reported')
    call check(adi_error_system() == 2 .and. adi_error_row() == 4, 'singular block: system and row')
  end subroutine

  subroutine large()
    integer(c_int64_t), parameter :: n = 100001
    type(adi_large_plan) :: p
    real(8), allocatable :: a(:), b(:), c(:), d(:), u(:)
    real(8) :: worst
    allocate (a(n), b(n), c(n), d(n), u(n))
    a = -1; c = -1; b = 3
    call random_number(d)
    call check(p%create(ex, n) == ADI_SUCCESS, 'large plan')
    call check(p%solve(a, b, c, d, u) == ADI_SUCCESS, 'large solve')
    worst = maxval(abs(3 * u(2:n - 1) - u(1:n - 2) - u(3:n) - d(2:n - 1)))
    worst = max(worst, abs(3 * u(1) - u(2) - d(1)), abs(3 * u(n) - u(n - 1) - d(n)))
    call check(worst < 1d-12, 'large residual')
  end subroutine

  subroutine variable()
    integer(c_int32_t) :: sizes(4) = [3, 0, 17, 1]
    type(adi_variable_plan) :: p
    real(8) :: a(21), b(21), c(21), d(21), u(21), worst, r
    integer :: s, i, o
    call random_number(a); call random_number(c); call random_number(d)
    b = 3
    call check(p%create(ex, sizes) == ADI_SUCCESS, 'variable-size plan')
    call check(p%solve(a, b, c, d, u) == ADI_SUCCESS, 'variable-size solve')
    worst = 0
    o = 0
    do s = 1, 4
      do i = 1, sizes(s)
        r = b(o + i) * u(o + i) - d(o + i)
        if (i > 1) r = r + a(o + i) * u(o + i - 1)
        if (i < sizes(s)) r = r + c(o + i) * u(o + i + 1)
        worst = max(worst, abs(r))
      end do
      o = o + sizes(s)
    end do
    call check(worst < 1d-12, 'variable-size residual')
  end subroutine

  subroutine cholesky()
    integer(c_int32_t) :: sizes(2) = [4, 6], info(2)
    type(adi_cholesky_plan) :: p
    real(8) :: M1(4, 4), M2(6, 6), store(16 + 36), rhs(10), x(10)
    integer :: i
    call random_number(M1); call random_number(M2)
    M1 = M1 + transpose(M1); M2 = M2 + transpose(M2)
    do i = 1, 4
      M1(i, i) = M1(i, i) + 20
    end do
    do i = 1, 6
      M2(i, i) = M2(i, i) + 20
    end do
    store(1:16) = reshape(M1, [16]); store(17:52) = reshape(M2, [36])
    call random_number(rhs)
    x = rhs
    call check(p%create(ex, sizes) == ADI_SUCCESS, 'Cholesky plan')
    call check(p%factor(store, info) == ADI_SUCCESS, 'Cholesky factor')
    call check(all(info == 0), 'Cholesky info all 0')
    call check(p%solve(store, x, 1) == ADI_SUCCESS, 'Cholesky solve')
    call check(maxval(abs(matmul(M1, x(1:4)) - rhs(1:4))) < 1d-12 .and. &
               maxval(abs(matmul(M2, x(5:10)) - rhs(5:10))) < 1d-12, 'Cholesky residual')
    ! check_pivots (the option's name in every family): matrix 1 (0-based) fails at column 2.
    store(1:16) = reshape(M1, [16]); store(17:52) = reshape(M2, [36])
    store(16 + 2*6 + 3) = -1d0
    call check(p%create(ex, sizes, check_pivots=.true.) == ADI_SUCCESS, 'Cholesky plan, check_pivots')
    call check(p%factor(store) == ADI_ERROR_SINGULAR_SYSTEM, 'Cholesky check_pivots reports')
    call check(adi_error_system() == 1 .and. adi_error_row() == 2, 'Cholesky failure names matrix and column')
  end subroutine

  subroutine hines()
    integer(c_int32_t) :: parent(5) = [-1, 0, 1, 1, 0]  ! 0-based parents, C convention
    type(adi_hines_plan) :: p
    real(8) :: off(5, 3), diag(5, 3), rhs(5, 3), diag0(5, 3), rhs0(5, 3), r(5), worst
    integer :: s, i
    call random_number(off); call random_number(rhs)
    off = -off
    diag = 4
    diag0 = diag; rhs0 = rhs
    call check(p%create(ex, parent, 3) == ADI_SUCCESS, 'Hines plan (3 neurons of one tree)')
    call check(p%solve(off, diag, rhs) == ADI_SUCCESS, 'Hines solve')
    worst = 0
    do s = 1, 3
      r = diag0(:, s) * rhs(:, s) - rhs0(:, s)
      do i = 2, 5
        r(i) = r(i) + off(i, s) * rhs(parent(i) + 1, s)
        r(parent(i) + 1) = r(parent(i) + 1) + off(i, s) * rhs(i, s)
      end do
      worst = max(worst, maxval(abs(r)))
    end do
    call check(worst < 1d-12, 'Hines residual')
  end subroutine

  subroutine heat()
    type(adi_heat_problem) :: prob
    type(adi_heat_solver) :: hs
    real(8) :: u(65), exact
    real(8), parameter :: pi = 3.14159265358979d0
    integer :: i
    prob%n = [65, 1, 1]
    prob%scheme = ADI_DOUGLAS
    call check(hs%create(ex, prob) == ADI_SUCCESS, 'heat solver (1-D, Dirichlet)')
    u = [(sin(pi * i / 64d0), i = 0, 64)]
    call check(hs%write(u) == ADI_SUCCESS, 'heat write')
    call check(hs%advance(0d0, 0.05d0, 50) == ADI_SUCCESS, 'heat advance')
    call check(hs%read(u) == ADI_SUCCESS, 'heat read')
    exact = exp(-pi**2 * 0.05d0)
    call check(maxval(abs(u - exact * [(sin(pi * i / 64d0), i = 0, 64)])) < 1d-3, 'heat decay of sin(pi x)')
  end subroutine

  subroutine errors()
    type(adi_tridiagonal_plan) :: p
    type(adi_block_plan) :: b
    real(8) :: x(4, 2)
    call check(p%create_strided(ex, 0, 3) == ADI_ERROR_INVALID_ARGUMENT, 'n = 0 refused')
    call check(len(adi_error_message()) > 10, 'message: '//adi_error_message())
    call check(adi_status_name(ADI_ERROR_INVALID_ARGUMENT) == 'ADI_ERROR_INVALID_ARGUMENT', 'status name')
    call check(b%create(ex, 9, 3, 3) == ADI_ERROR_INVALID_ARGUMENT, 'block size 9 refused')
    call check(p%create_strided(ex, 4, 2, precision=ADI_FLOAT32) == ADI_SUCCESS, 'fp32 plan')
    x = 1
    call check(p%solve(x, x, x, x, x) == ADI_ERROR_WRONG_PRECISION, 'fp64 arrays on an fp32 plan refused')
    call check(p%create_box(ex, 4, 4, 4, 7) == ADI_ERROR_INVALID_ARGUMENT, 'axis 7 refused')
    if (.not. adi_cuda_available()) then
      call check(adi_cuda_executor(cuda) == ADI_ERROR_UNSUPPORTED, 'CUDA executor without a device: unsupported')
    else
      call check(adi_cuda_executor(cuda) == ADI_SUCCESS, 'CUDA executor')
    end if
  end subroutine

end program

! The Fortran module adi: plans and solves of the adi library on the caller's own arrays,
! through the C API (adi/adi_c.h) and iso_c_binding.
!
!   use adi
!   type(adi_executor) :: ex
!   type(adi_block_plan) :: plan
!   real(8) :: A(5,5,n,m), B(5,5,n,m), C(5,5,n,m), d(5,n,m)   ! column-major blocks, as they are
!   call adi_check(adi_host_executor(ex))
!   call adi_check(plan%create(ex, 5, n, m))                  ! m systems of n block rows, fp64
!   call adi_check(plan%solve(A, B, C, d, d))                 ! in place: d <- solution
!
! - Every function returns an integer status (ADI_SUCCESS = 0 or an ADI_ERROR_* code of the
!   C API); adi_error_message() gives the message of the last failure on this thread and
!   adi_error_system() / adi_error_row() the failing system and row of a singular one;
!   adi_check(status) stops the program with the message (an error-stop variant).
! - Arrays are passed as they are (any rank, contiguous: no copy; a non-contiguous section
!   is copied in and out by the compiler). real(c_float) and real(c_double) arrays select
!   the precision; a plan is created for one (precision argument, default ADI_FLOAT64).
! - Handles are freed by their final procedure or by destroy(); do not copy a handle by
!   assignment (both copies would free the same plan).
! - Block plans default to column-major blocks (ADI_COLUMN_MAJOR): entry (r, c) of block i
!   of system s is A(r, c, i, s).
module adi
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! ----- constants of the C API ---------------------------------------------------------
  integer, parameter, public :: ADI_SUCCESS = 0, ADI_ERROR_INVALID_ARGUMENT = 1, ADI_ERROR_NULL_POINTER = 2, &
                                ADI_ERROR_SINGULAR_SYSTEM = 3, ADI_ERROR_UNSUPPORTED = 4, ADI_ERROR_DEVICE = 5, &
                                ADI_ERROR_OUT_OF_MEMORY = 6, ADI_ERROR_WRONG_PRECISION = 7, ADI_ERROR_INTERNAL = 8
  integer, parameter, public :: ADI_FLOAT32 = 0, ADI_FLOAT64 = 1
  integer, parameter, public :: ADI_AXIS_X = 0, ADI_AXIS_Y = 1, ADI_AXIS_Z = 2
  integer, parameter, public :: ADI_ROW_MAJOR = 0, ADI_COLUMN_MAJOR = 1
  integer, parameter, public :: ADI_DIRICHLET = 0, ADI_NEUMANN = 1, ADI_PERIODIC = 2
  integer, parameter, public :: ADI_DOUGLAS = 0, ADI_CRAIG_SNEYD = 1, ADI_MODIFIED_CRAIG_SNEYD = 2, &
                                ADI_HUNDSDORFER_VERWER = 3, ADI_PEACEMAN_RACHFORD = 4

  ! ----- the C structs ------------------------------------------------------------------
  type, bind(c), public :: adi_lines_t
    integer(c_int64_t) :: n = 0, stride = 1, count0 = 0, stride0 = 0, count1 = 1, stride1 = 0
  end type
  type, bind(c) :: c_tridiagonal_options
    integer(c_int32_t) :: periodic = 0, check_pivots = 1
    type(c_ptr) :: kernel = c_null_ptr
  end type
  type, bind(c) :: c_block_strides
    integer(c_int64_t) :: row = 0, system0 = 0, system1 = 0, component = 1
  end type
  type, bind(c) :: c_block_lines
    integer(c_int32_t) :: m = 0, order = 0
    integer(c_int64_t) :: n = 0, count0 = 0, count1 = 1
    type(c_block_strides) :: vectors, blocks
  end type
  type, bind(c) :: c_block_options
    integer(c_int32_t) :: periodic = 0, check_pivots = 1
    real(c_double) :: pivot_tolerance = 0
    type(c_ptr) :: kernel = c_null_ptr
  end type
  type, bind(c) :: c_variable_layout
    integer(c_int32_t) :: kind = 0
    integer(c_int64_t) :: stride = 0, rows = 0
    type(c_ptr) :: offsets = c_null_ptr
  end type
  ! The heat problem (adi_heat_problem of the C API); defaults as adi_heat_problem_init.
  type, bind(c), public :: adi_heat_problem
    integer(c_int64_t) :: n(3) = [2_c_int64_t, 1_c_int64_t, 1_c_int64_t]
    real(c_double) :: lo(3) = 0, hi(3) = 1
    real(c_double) :: diffusivity(3) = 1
    integer(c_int32_t) :: boundary(6) = ADI_DIRICHLET
    real(c_double) :: boundary_value(6) = 0
    integer(c_int32_t) :: scheme = ADI_DOUGLAS
    real(c_double) :: theta = 0
    integer(c_int32_t) :: damping_steps = 0
  end type

  ! ----- handles ------------------------------------------------------------------------
  type, public :: adi_executor
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: destroy => executor_destroy
    final :: executor_final
  end type

  type, public :: adi_tridiagonal_plan
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: create_strided => tri_create_strided
    procedure :: create_box => tri_create_box
    procedure :: create_lines => tri_create_lines
    procedure, private :: tri_solve_d, tri_solve_s, tri_solve_shared_d, tri_solve_shared_s
    generic :: solve => tri_solve_d, tri_solve_s
    generic :: solve_shared => tri_solve_shared_d, tri_solve_shared_s
    procedure :: kernel => tri_kernel
    procedure :: destroy => tri_destroy
    final :: tri_final
  end type

  type, public :: adi_block_plan
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: create => block_create_contiguous
    procedure :: create_interleaved => block_create_interleaved
    procedure :: create_grid => block_create_grid
    procedure, private :: block_solve_d, block_solve_s
    generic :: solve => block_solve_d, block_solve_s
    procedure :: destroy => block_destroy
    final :: block_final
  end type

  type, public :: adi_large_plan
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: create => large_create
    procedure, private :: large_solve_d, large_solve_s
    generic :: solve => large_solve_d, large_solve_s
    procedure :: destroy => large_destroy
    final :: large_final
  end type

  type, public :: adi_variable_plan
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: create => variable_create
    procedure, private :: variable_solve_d, variable_solve_s
    generic :: solve => variable_solve_d, variable_solve_s
    procedure :: destroy => variable_destroy
    final :: variable_final
  end type

  type, public :: adi_cholesky_plan
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: create => cholesky_create
    procedure, private :: cholesky_factor_d, cholesky_factor_s, cholesky_solve_d, cholesky_solve_s
    generic :: factor => cholesky_factor_d, cholesky_factor_s
    generic :: solve => cholesky_solve_d, cholesky_solve_s
    procedure :: destroy => cholesky_destroy
    final :: cholesky_final
  end type

  type, public :: adi_hines_plan
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: create => hines_create
    procedure, private :: hines_solve_d, hines_solve_s
    generic :: solve => hines_solve_d, hines_solve_s
    procedure :: destroy => hines_destroy
    final :: hines_final
  end type

  type, public :: adi_heat_solver
    type(c_ptr) :: h = c_null_ptr
  contains
    procedure :: create => heat_create
    procedure :: step => heat_step
    procedure :: advance => heat_advance
    procedure, private :: heat_read_d, heat_read_s, heat_write_d, heat_write_s
    generic :: read => heat_read_d, heat_read_s
    generic :: write => heat_write_d, heat_write_s
    procedure :: destroy => heat_destroy
    final :: heat_final
  end type

  public :: adi_host_executor, adi_cuda_executor, adi_cuda_available, adi_error_message, adi_error_system, &
            adi_error_row, adi_status_name, adi_check

  ! ----- the C functions ----------------------------------------------------------------
  interface
    function c_status_string(s) bind(c, name="adi_status_string")
      import :: c_ptr, c_int32_t
      integer(c_int32_t), value :: s
      type(c_ptr) :: c_status_string
    end function
    integer(c_int64_t) function c_last_error_message_copy(buf, size) bind(c, name="adi_last_error_message_copy")
      import :: c_char, c_int64_t
      character(kind=c_char) :: buf(*)
      integer(c_int64_t), value :: size
    end function
    integer(c_int64_t) function c_last_error_system() bind(c, name="adi_last_error_system")
      import :: c_int64_t
    end function
    integer(c_int64_t) function c_last_error_row() bind(c, name="adi_last_error_row")
      import :: c_int64_t
    end function
    integer(c_int32_t) function c_cuda_available() bind(c, name="adi_cuda_available")
      import :: c_int32_t
    end function
    integer(c_int) function c_executor_create_host(threads, out) bind(c, name="adi_executor_create_host")
      import :: c_int, c_int32_t, c_ptr
      integer(c_int32_t), value :: threads
      type(c_ptr) :: out
    end function
    integer(c_int) function c_executor_create_cuda(device, stream, out) bind(c, name="adi_executor_create_cuda")
      import :: c_int, c_int32_t, c_ptr
      integer(c_int32_t), value :: device
      type(c_ptr), value :: stream
      type(c_ptr) :: out
    end function
    integer(c_int) function c_lines_strided(n, count, es, ls, out) bind(c, name="adi_lines_strided")
      import :: c_int, c_int64_t, adi_lines_t
      integer(c_int64_t), value :: n, count, es, ls
      type(adi_lines_t) :: out
    end function
    integer(c_int) function c_lines_box(nx, ny, nz, sy, sz, axis, out) bind(c, name="adi_lines_box")
      import :: c_int, c_int64_t, c_int32_t, adi_lines_t
      integer(c_int64_t), value :: nx, ny, nz, sy, sz
      integer(c_int32_t), value :: axis
      type(adi_lines_t) :: out
    end function
    integer(c_int) function c_tridiagonal_plan_create(ex, prec, lines, opt, out) &
        bind(c, name="adi_tridiagonal_plan_create")
      import :: c_int, c_int32_t, c_ptr, adi_lines_t, c_tridiagonal_options
      type(c_ptr), value :: ex
      integer(c_int32_t), value :: prec
      type(adi_lines_t) :: lines
      type(c_tridiagonal_options) :: opt
      type(c_ptr) :: out
    end function
    function c_tridiagonal_plan_kernel(p) bind(c, name="adi_tridiagonal_plan_kernel")
      import :: c_ptr
      type(c_ptr), value :: p
      type(c_ptr) :: c_tridiagonal_plan_kernel
    end function
    integer(c_int) function c_block_lines_contiguous(m, n, systems, order, out) bind(c, name="adi_block_lines_contiguous")
      import :: c_int, c_int32_t, c_int64_t, c_block_lines
      integer(c_int32_t), value :: m, order
      integer(c_int64_t), value :: n, systems
      type(c_block_lines) :: out
    end function
    integer(c_int) function c_block_lines_interleaved(m, n, systems, order, out) &
        bind(c, name="adi_block_lines_interleaved")
      import :: c_int, c_int32_t, c_int64_t, c_block_lines
      integer(c_int32_t), value :: m, order
      integer(c_int64_t), value :: n, systems
      type(c_block_lines) :: out
    end function
    integer(c_int) function c_block_lines_grid(m, nx, ny, nz, axis, vs, bs, order, out) bind(c, name="adi_block_lines_grid")
      import :: c_int, c_int32_t, c_int64_t, c_block_lines
      integer(c_int32_t), value :: m, axis, order
      integer(c_int64_t), value :: nx, ny, nz
      integer(c_int64_t) :: vs(4), bs(4)
      type(c_block_lines) :: out
    end function
    integer(c_int) function c_block_plan_create(ex, prec, lines, opt, out) bind(c, name="adi_block_plan_create")
      import :: c_int, c_int32_t, c_ptr, c_block_lines, c_block_options
      type(c_ptr), value :: ex
      integer(c_int32_t), value :: prec
      type(c_block_lines) :: lines
      type(c_block_options) :: opt
      type(c_ptr) :: out
    end function
    integer(c_int) function c_large_plan_create(ex, prec, n, count, stride, periodic, out) &
        bind(c, name="adi_large_plan_create")
      import :: c_int, c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: ex
      integer(c_int32_t), value :: prec, periodic
      integer(c_int64_t), value :: n, count, stride
      type(c_ptr) :: out
    end function
    integer(c_int) function c_variable_plan_create(ex, prec, sizes, count, layout, periodic, out) &
        bind(c, name="adi_variable_plan_create")
      import :: c_int, c_int32_t, c_int64_t, c_ptr, c_variable_layout
      type(c_ptr), value :: ex
      integer(c_int32_t), value :: prec, periodic
      integer(c_int32_t) :: sizes(*)
      integer(c_int64_t), value :: count
      type(c_variable_layout) :: layout
      type(c_ptr) :: out
    end function
    integer(c_int) function c_cholesky_plan_create(ex, prec, sizes, count, offsets, report, out) &
        bind(c, name="adi_cholesky_plan_create")
      import :: c_int, c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: ex
      integer(c_int32_t), value :: prec, report
      integer(c_int32_t) :: sizes(*)
      integer(c_int64_t), value :: count
      type(c_ptr), value :: offsets
      type(c_ptr) :: out
    end function
    integer(c_int) function c_hines_plan_create(ex, prec, trees, sizes, parents, count, tree_of, out) &
        bind(c, name="adi_hines_plan_create")
      import :: c_int, c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: ex
      integer(c_int32_t), value :: prec, trees
      integer(c_int32_t) :: sizes(*), parents(*)
      integer(c_int64_t), value :: count
      type(c_ptr), value :: tree_of
      type(c_ptr) :: out
    end function
    integer(c_int) function c_heat_solver_create(ex, prec, problem, out) bind(c, name="adi_heat_solver_create")
      import :: c_int, c_int32_t, c_ptr, adi_heat_problem
      type(c_ptr), value :: ex
      integer(c_int32_t), value :: prec
      type(adi_heat_problem) :: problem
      type(c_ptr) :: out
    end function
    integer(c_int) function c_heat_step(h, t, dt) bind(c, name="adi_heat_step")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: h
      real(c_double), value :: t, dt
    end function
    integer(c_int) function c_heat_advance(h, t0, t1, steps) bind(c, name="adi_heat_advance")
      import :: c_int, c_ptr, c_double, c_int64_t
      type(c_ptr), value :: h
      real(c_double), value :: t0, t1
      integer(c_int64_t), value :: steps
    end function
  end interface

contains

  ! ----- errors -------------------------------------------------------------------------

  !> The message of the last failed call on this thread ('' after a successful one).
  function adi_error_message() result(msg)
    character(len=:), allocatable :: msg
    character(kind=c_char) :: buf(2048)
    integer(c_int64_t) :: n, i
    n = c_last_error_message_copy(buf, int(size(buf), c_int64_t))
    n = min(n, int(size(buf) - 1, c_int64_t))
    allocate (character(len=n) :: msg)
    do i = 1, n
      msg(i:i) = buf(i)
    end do
  end function

  !> After ADI_ERROR_SINGULAR_SYSTEM: the failing system and row (0-based; -1 when unknown).
  integer(c_int64_t) function adi_error_system()
    adi_error_system = c_last_error_system()
  end function
  integer(c_int64_t) function adi_error_row()
    adi_error_row = c_last_error_row()
  end function

  !> 'ADI_SUCCESS', 'ADI_ERROR_INVALID_ARGUMENT', ...
  function adi_status_name(status) result(name)
    integer, intent(in) :: status
    character(len=:), allocatable :: name
    name = c_string(c_status_string(int(status, c_int32_t)))
  end function

  !> Stops the program with the status and message unless status == ADI_SUCCESS.
  subroutine adi_check(status)
    integer, intent(in) :: status
    if (status /= ADI_SUCCESS) then
      write (*, '(a)') 'adi: '//adi_status_name(status)//': '//adi_error_message()
      error stop 1
    end if
  end subroutine

  logical function adi_cuda_available()
    adi_cuda_available = c_cuda_available() /= 0
  end function

  function c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    call c_f_pointer(p, chars, [4096])
    n = 0
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate (character(len=n) :: s)
    s = transfer(chars(1:n), s)
  end function

  integer function prec_of(precision)
    integer, intent(in), optional :: precision
    prec_of = ADI_FLOAT64
    if (present(precision)) prec_of = precision
  end function

  integer(c_int32_t) function flag(x)
    logical, intent(in), optional :: x
    flag = 0
    if (present(x)) then
      if (x) flag = 1
    end if
  end function

  ! ----- executors ----------------------------------------------------------------------

  !> Host executor on `threads` OpenMP threads (default 0: all).
  integer function adi_host_executor(ex, threads) result(st)
    type(adi_executor), intent(inout) :: ex
    integer, intent(in), optional :: threads
    integer(c_int32_t) :: t
    call ex%destroy()
    t = 0
    if (present(threads)) t = threads
    st = c_executor_create_host(t, ex%h)
  end function

  !> CUDA executor: device (default 0) and stream (a cudaStream_t as c_ptr; default the legacy stream).
  integer function adi_cuda_executor(ex, device, stream) result(st)
    type(adi_executor), intent(inout) :: ex
    integer, intent(in), optional :: device
    type(c_ptr), intent(in), optional :: stream
    integer(c_int32_t) :: dv
    type(c_ptr) :: sp
    call ex%destroy()
    dv = 0
    sp = c_null_ptr
    if (present(device)) dv = device
    if (present(stream)) sp = stream
    st = c_executor_create_cuda(dv, sp, ex%h)
  end function

  subroutine executor_destroy(this)
    class(adi_executor), intent(inout) :: this
    interface
      integer(c_int) function f(h) bind(c, name="adi_executor_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: h
      end function
    end interface
    integer :: s
    if (c_associated(this%h)) s = f(this%h)
    this%h = c_null_ptr
  end subroutine
  subroutine executor_final(this)
    type(adi_executor), intent(inout) :: this
    call this%destroy()
  end subroutine

  ! ----- tridiagonal --------------------------------------------------------------------

  integer function tri_make(this, ex, lines, precision, periodic) result(st)
    class(adi_tridiagonal_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    type(adi_lines_t), intent(inout) :: lines
    integer, intent(in), optional :: precision
    logical, intent(in), optional :: periodic
    type(c_tridiagonal_options) :: opt
    call this%destroy()
    opt%periodic = flag(periodic)
    st = c_tridiagonal_plan_create(ex%h, int(prec_of(precision), c_int32_t), lines, opt, this%h)
  end function

  !> count lines of n values, element i of line l (0-based) at l*line_stride + i*element_stride
  !> (defaults 1 and n: the columns of an (n, count) array).
  integer function tri_create_strided(this, ex, n, count, element_stride, line_stride, precision, periodic) result(st)
    class(adi_tridiagonal_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    integer, intent(in) :: n, count
    integer, intent(in), optional :: element_stride, line_stride, precision
    logical, intent(in), optional :: periodic
    type(adi_lines_t) :: lines
    integer(c_int64_t) :: es, ls
    es = 1
    ls = n
    if (present(element_stride)) es = element_stride
    if (present(line_stride)) ls = line_stride
    st = c_lines_strided(int(n, c_int64_t), int(count, c_int64_t), es, ls, lines)
    if (st == ADI_SUCCESS) st = tri_make(this, ex, lines, precision, periodic)
  end function

  !> Every line along axis (ADI_AXIS_X/Y/Z) of an array u(nx, ny, nz).
  integer function tri_create_box(this, ex, nx, ny, nz, axis, precision, periodic) result(st)
    class(adi_tridiagonal_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    integer, intent(in) :: nx, ny, nz, axis
    integer, intent(in), optional :: precision
    logical, intent(in), optional :: periodic
    type(adi_lines_t) :: lines
    st = c_lines_box(int(nx, c_int64_t), int(ny, c_int64_t), int(nz, c_int64_t), 0_c_int64_t, 0_c_int64_t, &
                     int(axis, c_int32_t), lines)
    if (st == ADI_SUCCESS) st = tri_make(this, ex, lines, precision, periodic)
  end function

  !> Any layout of the C API's adi_lines (element i of line l0 + l1*count0 at l0*stride0 + l1*stride1 + i*stride).
  integer function tri_create_lines(this, ex, lines, precision, periodic) result(st)
    class(adi_tridiagonal_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    type(adi_lines_t), intent(in) :: lines
    integer, intent(in), optional :: precision
    logical, intent(in), optional :: periodic
    type(adi_lines_t) :: l
    l = lines
    st = tri_make(this, ex, l, precision, periodic)
  end function

  integer function call5(name, h, a, b, c, d, u) result(st)
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: h, a, b, c, d, u
    interface
      integer(c_int) function t_d(p, a, b, c, d, u) bind(c, name="adi_tridiagonal_solve_f64")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
      integer(c_int) function t_s(p, a, b, c, d, u) bind(c, name="adi_tridiagonal_solve_f32")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
      integer(c_int) function ts_d(p, a, b, c, d, u) bind(c, name="adi_tridiagonal_solve_shared_f64")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
      integer(c_int) function ts_s(p, a, b, c, d, u) bind(c, name="adi_tridiagonal_solve_shared_f32")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
      integer(c_int) function b_d(p, a, b, c, d, u) bind(c, name="adi_block_solve_f64")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
      integer(c_int) function b_s(p, a, b, c, d, u) bind(c, name="adi_block_solve_f32")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
      integer(c_int) function l_d(p, a, b, c, d, u) bind(c, name="adi_large_solve_f64")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
      integer(c_int) function l_s(p, a, b, c, d, u) bind(c, name="adi_large_solve_f32")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
      integer(c_int) function v_d(p, a, b, c, d, u) bind(c, name="adi_variable_solve_f64")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
      integer(c_int) function v_s(p, a, b, c, d, u) bind(c, name="adi_variable_solve_f32")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, b, c, d, u
      end function
    end interface
    select case (name)
    case ('tri_d'); st = t_d(h, a, b, c, d, u)
    case ('tri_s'); st = t_s(h, a, b, c, d, u)
    case ('tri_shared_d'); st = ts_d(h, a, b, c, d, u)
    case ('tri_shared_s'); st = ts_s(h, a, b, c, d, u)
    case ('block_d'); st = b_d(h, a, b, c, d, u)
    case ('block_s'); st = b_s(h, a, b, c, d, u)
    case ('large_d'); st = l_d(h, a, b, c, d, u)
    case ('large_s'); st = l_s(h, a, b, c, d, u)
    case ('variable_d'); st = v_d(h, a, b, c, d, u)
    case default; st = v_s(h, a, b, c, d, u)
    end select
  end function

  !> Solves every line: a, b, c shaped like d; u may be d (in place).
  integer function tri_solve_d(this, a, b, c, d, u) result(st)
    class(adi_tridiagonal_plan), intent(inout) :: this
    real(c_double), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_double), intent(inout), target, contiguous :: u(..)
    st = call5('tri_d', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function
  integer function tri_solve_s(this, a, b, c, d, u) result(st)
    class(adi_tridiagonal_plan), intent(inout) :: this
    real(c_float), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_float), intent(inout), target, contiguous :: u(..)
    st = call5('tri_s', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function
  !> a, b, c: n values each, the same for every line.
  integer function tri_solve_shared_d(this, a, b, c, d, u) result(st)
    class(adi_tridiagonal_plan), intent(inout) :: this
    real(c_double), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_double), intent(inout), target, contiguous :: u(..)
    st = call5('tri_shared_d', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function
  integer function tri_solve_shared_s(this, a, b, c, d, u) result(st)
    class(adi_tridiagonal_plan), intent(inout) :: this
    real(c_float), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_float), intent(inout), target, contiguous :: u(..)
    st = call5('tri_shared_s', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function

  function tri_kernel(this) result(name)
    class(adi_tridiagonal_plan), intent(in) :: this
    character(len=:), allocatable :: name
    name = c_string(c_tridiagonal_plan_kernel(this%h))
  end function

  subroutine tri_destroy(this)
    class(adi_tridiagonal_plan), intent(inout) :: this
    interface
      integer(c_int) function f(h) bind(c, name="adi_tridiagonal_plan_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: h
      end function
    end interface
    integer :: s
    if (c_associated(this%h)) s = f(this%h)
    this%h = c_null_ptr
  end subroutine
  subroutine tri_final(this)
    type(adi_tridiagonal_plan), intent(inout) :: this
    call this%destroy()
  end subroutine

  ! ----- block --------------------------------------------------------------------------

  integer function block_make(this, ex, lines, precision, periodic) result(st)
    class(adi_block_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    type(c_block_lines), intent(inout) :: lines
    integer, intent(in), optional :: precision
    logical, intent(in), optional :: periodic
    type(c_block_options) :: opt
    call this%destroy()
    opt%periodic = flag(periodic)
    st = c_block_plan_create(ex%h, int(prec_of(precision), c_int32_t), lines, opt, this%h)
  end function

  integer function order_of(order)
    integer, intent(in), optional :: order
    order_of = ADI_COLUMN_MAJOR
    if (present(order)) order_of = order
  end function

  !> `systems` systems of n block rows of m x m blocks: A(m, m, n, systems), d(m, n, systems)
  !> (order ADI_COLUMN_MAJOR, the default; ADI_ROW_MAJOR reads A(c, r, i, s) as entry (r, c)).
  integer function block_create_contiguous(this, ex, m, n, systems, precision, periodic, order) result(st)
    class(adi_block_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    integer, intent(in) :: m, n, systems
    integer, intent(in), optional :: precision, order
    logical, intent(in), optional :: periodic
    type(c_block_lines) :: lines
    st = c_block_lines_contiguous(int(m, c_int32_t), int(n, c_int64_t), int(systems, c_int64_t), &
                                  int(order_of(order), c_int32_t), lines)
    if (st == ADI_SUCCESS) st = block_make(this, ex, lines, precision, periodic)
  end function

  !> Block row i of every system together: A(m, m, systems, n), d(m, systems, n).
  integer function block_create_interleaved(this, ex, m, n, systems, precision, periodic, order) result(st)
    class(adi_block_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    integer, intent(in) :: m, n, systems
    integer, intent(in), optional :: precision, order
    logical, intent(in), optional :: periodic
    type(c_block_lines) :: lines
    st = c_block_lines_interleaved(int(m, c_int32_t), int(n, c_int64_t), int(systems, c_int64_t), &
                                   int(order_of(order), c_int32_t), lines)
    if (st == ADI_SUCCESS) st = block_make(this, ex, lines, precision, periodic)
  end function

  !> The systems along axis of an nx x ny x nz grid of points with m values each, stored as
  !> d(m, nx, ny, nz) and A(m, m, nx, ny, nz) (the CFD layout: a block per point).
  integer function block_create_grid(this, ex, m, nx, ny, nz, axis, precision, periodic, order) result(st)
    class(adi_block_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    integer, intent(in) :: m, nx, ny, nz, axis
    integer, intent(in), optional :: precision, order
    logical, intent(in), optional :: periodic
    type(c_block_lines) :: lines
    integer(c_int64_t) :: vs(4), bs(4), mm
    mm = int(m, c_int64_t) * m
    vs = [int(m, c_int64_t), int(m, c_int64_t) * nx, int(m, c_int64_t) * nx * ny, 1_c_int64_t]
    bs = [mm, mm * nx, mm * nx * ny, 1_c_int64_t]
    st = c_block_lines_grid(int(m, c_int32_t), int(nx, c_int64_t), int(ny, c_int64_t), int(nz, c_int64_t), &
                            int(axis, c_int32_t), vs, bs, int(order_of(order), c_int32_t), lines)
    if (st == ADI_SUCCESS) st = block_make(this, ex, lines, precision, periodic)
  end function

  !> Solves every system; u may be d (in place).
  integer function block_solve_d(this, a, b, c, d, u) result(st)
    class(adi_block_plan), intent(inout) :: this
    real(c_double), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_double), intent(inout), target, contiguous :: u(..)
    st = call5('block_d', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function
  integer function block_solve_s(this, a, b, c, d, u) result(st)
    class(adi_block_plan), intent(inout) :: this
    real(c_float), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_float), intent(inout), target, contiguous :: u(..)
    st = call5('block_s', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function

  subroutine block_destroy(this)
    class(adi_block_plan), intent(inout) :: this
    interface
      integer(c_int) function f(h) bind(c, name="adi_block_plan_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: h
      end function
    end interface
    integer :: s
    if (c_associated(this%h)) s = f(this%h)
    this%h = c_null_ptr
  end subroutine
  subroutine block_final(this)
    type(adi_block_plan), intent(inout) :: this
    call this%destroy()
  end subroutine

  ! ----- large systems ------------------------------------------------------------------

  !> count systems of n unknowns (default 1), system s at s*system_stride (default n).
  integer function large_create(this, ex, n, count, system_stride, precision, periodic) result(st)
    class(adi_large_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    integer(c_int64_t), intent(in) :: n
    integer, intent(in), optional :: count, precision
    integer(c_int64_t), intent(in), optional :: system_stride
    logical, intent(in), optional :: periodic
    integer(c_int64_t) :: k, s
    call this%destroy()
    k = 1
    s = 0
    if (present(count)) k = count
    if (present(system_stride)) s = system_stride
    st = c_large_plan_create(ex%h, int(prec_of(precision), c_int32_t), n, k, s, flag(periodic), this%h)
  end function
  integer function large_solve_d(this, a, b, c, d, u) result(st)
    class(adi_large_plan), intent(inout) :: this
    real(c_double), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_double), intent(inout), target, contiguous :: u(..)
    st = call5('large_d', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function
  integer function large_solve_s(this, a, b, c, d, u) result(st)
    class(adi_large_plan), intent(inout) :: this
    real(c_float), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_float), intent(inout), target, contiguous :: u(..)
    st = call5('large_s', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function
  subroutine large_destroy(this)
    class(adi_large_plan), intent(inout) :: this
    interface
      integer(c_int) function f(h) bind(c, name="adi_large_plan_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: h
      end function
    end interface
    integer :: s
    if (c_associated(this%h)) s = f(this%h)
    this%h = c_null_ptr
  end subroutine
  subroutine large_final(this)
    type(adi_large_plan), intent(inout) :: this
    call this%destroy()
  end subroutine

  ! ----- variable-size ------------------------------------------------------------------

  !> System s has sizes(s) unknowns, stored one after the other (compact), or, with
  !> padded = .true., element k of system s at k*size(sizes) + s (an array x(count, rows)).
  integer function variable_create(this, ex, sizes, precision, periodic, padded) result(st)
    class(adi_variable_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    integer(c_int32_t), intent(in) :: sizes(:)
    integer, intent(in), optional :: precision
    logical, intent(in), optional :: periodic, padded
    type(c_variable_layout) :: layout
    call this%destroy()
    layout%kind = flag(padded)
    st = c_variable_plan_create(ex%h, int(prec_of(precision), c_int32_t), sizes, int(size(sizes), c_int64_t), &
                                layout, flag(periodic), this%h)
  end function
  integer function variable_solve_d(this, a, b, c, d, u) result(st)
    class(adi_variable_plan), intent(inout) :: this
    real(c_double), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_double), intent(inout), target, contiguous :: u(..)
    st = call5('variable_d', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function
  integer function variable_solve_s(this, a, b, c, d, u) result(st)
    class(adi_variable_plan), intent(inout) :: this
    real(c_float), intent(in), target, contiguous :: a(..), b(..), c(..), d(..)
    real(c_float), intent(inout), target, contiguous :: u(..)
    st = call5('variable_s', this%h, c_loc(a), c_loc(b), c_loc(c), c_loc(d), c_loc(u))
  end function
  subroutine variable_destroy(this)
    class(adi_variable_plan), intent(inout) :: this
    interface
      integer(c_int) function f(h) bind(c, name="adi_variable_plan_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: h
      end function
    end interface
    integer :: s
    if (c_associated(this%h)) s = f(this%h)
    this%h = c_null_ptr
  end subroutine
  subroutine variable_final(this)
    type(adi_variable_plan), intent(inout) :: this
    call this%destroy()
  end subroutine

  ! ----- Cholesky -----------------------------------------------------------------------

  !> Matrices of sizes(s) x sizes(s), column-major, one after the other.
  !> check_pivots: factor returns ADI_ERROR_SINGULAR_SYSTEM for a non-SPD matrix (the name of
  !> the option in every family; report_failure, its former name, still works this release).
  integer function cholesky_create(this, ex, sizes, precision, check_pivots, report_failure) result(st)
    class(adi_cholesky_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    integer(c_int32_t), intent(in) :: sizes(:)
    integer, intent(in), optional :: precision
    logical, intent(in), optional :: check_pivots, report_failure
    integer(c_int32_t) :: check
    call this%destroy()
    check = max(flag(check_pivots), flag(report_failure))
    st = c_cholesky_plan_create(ex%h, int(prec_of(precision), c_int32_t), sizes, int(size(sizes), c_int64_t), &
                                c_null_ptr, check, this%h)
  end function
  integer function cholesky_factor_d(this, a, info) result(st)
    class(adi_cholesky_plan), intent(inout) :: this
    real(c_double), intent(inout), target, contiguous :: a(..)
    integer(c_int32_t), intent(out), target, optional :: info(:)
    interface
      integer(c_int) function f(p, a, info) bind(c, name="adi_cholesky_factor_f64")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, info
      end function
    end interface
    type(c_ptr) :: ip
    ip = c_null_ptr
    if (present(info)) ip = c_loc(info)
    st = f(this%h, c_loc(a), ip)
  end function
  integer function cholesky_factor_s(this, a, info) result(st)
    class(adi_cholesky_plan), intent(inout) :: this
    real(c_float), intent(inout), target, contiguous :: a(..)
    integer(c_int32_t), intent(out), target, optional :: info(:)
    interface
      integer(c_int) function f(p, a, info) bind(c, name="adi_cholesky_factor_f32")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, a, info
      end function
    end interface
    type(c_ptr) :: ip
    ip = c_null_ptr
    if (present(info)) ip = c_loc(info)
    st = f(this%h, c_loc(a), ip)
  end function
  !> B_s (sizes(s) x nrhs, column-major, one after the other) <- A_s^-1 B_s.
  integer function cholesky_solve_d(this, l, b, nrhs) result(st)
    class(adi_cholesky_plan), intent(inout) :: this
    real(c_double), intent(in), target, contiguous :: l(..)
    real(c_double), intent(inout), target, contiguous :: b(..)
    integer, intent(in) :: nrhs
    interface
      integer(c_int) function f(p, l, b, nrhs, info) bind(c, name="adi_cholesky_solve_f64")
        import :: c_int, c_ptr, c_int32_t
        type(c_ptr), value :: p, l, b, info
        integer(c_int32_t), value :: nrhs
      end function
    end interface
    st = f(this%h, c_loc(l), c_loc(b), int(nrhs, c_int32_t), c_null_ptr)
  end function
  integer function cholesky_solve_s(this, l, b, nrhs) result(st)
    class(adi_cholesky_plan), intent(inout) :: this
    real(c_float), intent(in), target, contiguous :: l(..)
    real(c_float), intent(inout), target, contiguous :: b(..)
    integer, intent(in) :: nrhs
    interface
      integer(c_int) function f(p, l, b, nrhs, info) bind(c, name="adi_cholesky_solve_f32")
        import :: c_int, c_ptr, c_int32_t
        type(c_ptr), value :: p, l, b, info
        integer(c_int32_t), value :: nrhs
      end function
    end interface
    st = f(this%h, c_loc(l), c_loc(b), int(nrhs, c_int32_t), c_null_ptr)
  end function
  subroutine cholesky_destroy(this)
    class(adi_cholesky_plan), intent(inout) :: this
    interface
      integer(c_int) function f(h) bind(c, name="adi_cholesky_plan_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: h
      end function
    end interface
    integer :: s
    if (c_associated(this%h)) s = f(this%h)
    this%h = c_null_ptr
  end subroutine
  subroutine cholesky_final(this)
    type(adi_cholesky_plan), intent(inout) :: this
    call this%destroy()
  end subroutine

  ! ----- Hines --------------------------------------------------------------------------

  !> count neurons of one tree: parent(1) = -1, parent(i) < i - 1 is the 0-based parent of
  !> node i - 1 (the C convention); neuron after neuron in the arrays.
  integer function hines_create(this, ex, parent, count, precision) result(st)
    class(adi_hines_plan), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    integer(c_int32_t), intent(in) :: parent(:)
    integer, intent(in) :: count
    integer, intent(in), optional :: precision
    integer(c_int32_t) :: sizes(1)
    call this%destroy()
    sizes(1) = size(parent)
    st = c_hines_plan_create(ex%h, int(prec_of(precision), c_int32_t), 1_c_int32_t, sizes, parent, &
                             int(count, c_int64_t), c_null_ptr, this%h)
  end function
  !> rhs <- solution; diag is scratch afterwards.
  integer function hines_solve_d(this, offdiag, diag, rhs) result(st)
    class(adi_hines_plan), intent(inout) :: this
    real(c_double), intent(in), target, contiguous :: offdiag(..)
    real(c_double), intent(inout), target, contiguous :: diag(..), rhs(..)
    interface
      integer(c_int) function f(p, o, d, r) bind(c, name="adi_hines_solve_f64")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, o, d, r
      end function
    end interface
    st = f(this%h, c_loc(offdiag), c_loc(diag), c_loc(rhs))
  end function
  integer function hines_solve_s(this, offdiag, diag, rhs) result(st)
    class(adi_hines_plan), intent(inout) :: this
    real(c_float), intent(in), target, contiguous :: offdiag(..)
    real(c_float), intent(inout), target, contiguous :: diag(..), rhs(..)
    interface
      integer(c_int) function f(p, o, d, r) bind(c, name="adi_hines_solve_f32")
        import :: c_int, c_ptr
        type(c_ptr), value :: p, o, d, r
      end function
    end interface
    st = f(this%h, c_loc(offdiag), c_loc(diag), c_loc(rhs))
  end function
  subroutine hines_destroy(this)
    class(adi_hines_plan), intent(inout) :: this
    interface
      integer(c_int) function f(h) bind(c, name="adi_hines_plan_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: h
      end function
    end interface
    integer :: s
    if (c_associated(this%h)) s = f(this%h)
    this%h = c_null_ptr
  end subroutine
  subroutine hines_final(this)
    type(adi_hines_plan), intent(inout) :: this
    call this%destroy()
  end subroutine

  ! ----- heat solver --------------------------------------------------------------------

  integer function heat_create(this, ex, problem, precision) result(st)
    class(adi_heat_solver), intent(inout) :: this
    type(adi_executor), intent(in) :: ex
    type(adi_heat_problem), intent(in) :: problem
    integer, intent(in), optional :: precision
    type(adi_heat_problem) :: p
    call this%destroy()
    p = problem
    st = c_heat_solver_create(ex%h, int(prec_of(precision), c_int32_t), p, this%h)
  end function
  integer function heat_step(this, t, dt) result(st)
    class(adi_heat_solver), intent(inout) :: this
    real(c_double), intent(in) :: t, dt
    st = c_heat_step(this%h, t, dt)
  end function
  integer function heat_advance(this, t0, t1, steps) result(st)
    class(adi_heat_solver), intent(inout) :: this
    real(c_double), intent(in) :: t0, t1
    integer, intent(in) :: steps
    st = c_heat_advance(this%h, t0, t1, int(steps, c_int64_t))
  end function
  !> Copies u to / from an array u(nx, ny, nz) (or u(nx), u(nx, ny)).
  integer function heat_read_d(this, u) result(st)
    class(adi_heat_solver), intent(in) :: this
    real(c_double), intent(out), target, contiguous :: u(..)
    interface
      integer(c_int) function f(h, u) bind(c, name="adi_heat_read_f64")
        import :: c_int, c_ptr
        type(c_ptr), value :: h, u
      end function
    end interface
    st = f(this%h, c_loc(u))
  end function
  integer function heat_read_s(this, u) result(st)
    class(adi_heat_solver), intent(in) :: this
    real(c_float), intent(out), target, contiguous :: u(..)
    interface
      integer(c_int) function f(h, u) bind(c, name="adi_heat_read_f32")
        import :: c_int, c_ptr
        type(c_ptr), value :: h, u
      end function
    end interface
    st = f(this%h, c_loc(u))
  end function
  integer function heat_write_d(this, u) result(st)
    class(adi_heat_solver), intent(inout) :: this
    real(c_double), intent(in), target, contiguous :: u(..)
    interface
      integer(c_int) function f(h, u) bind(c, name="adi_heat_write_f64")
        import :: c_int, c_ptr
        type(c_ptr), value :: h, u
      end function
    end interface
    st = f(this%h, c_loc(u))
  end function
  integer function heat_write_s(this, u) result(st)
    class(adi_heat_solver), intent(inout) :: this
    real(c_float), intent(in), target, contiguous :: u(..)
    interface
      integer(c_int) function f(h, u) bind(c, name="adi_heat_write_f32")
        import :: c_int, c_ptr
        type(c_ptr), value :: h, u
      end function
    end interface
    st = f(this%h, c_loc(u))
  end function
  subroutine heat_destroy(this)
    class(adi_heat_solver), intent(inout) :: this
    interface
      integer(c_int) function f(h) bind(c, name="adi_heat_solver_destroy")
        import :: c_int, c_ptr
        type(c_ptr), value :: h
      end function
    end interface
    integer :: s
    if (c_associated(this%h)) s = f(this%h)
    this%h = c_null_ptr
  end subroutine
  subroutine heat_final(this)
    type(adi_heat_solver), intent(inout) :: this
    call this%destroy()
  end subroutine

end module adi

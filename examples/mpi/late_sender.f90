! late_sender.f90: late_sender.c in Fortran (`use mpi`), call for call, so that pp's tracer can
! be checked on Fortran's MPI bindings. In each of K repeats, all ranks leave a barrier
! together; rank 0 then burns X ms of CPU (a busy loop on the process's CPU clock, cpu_time, no
! sleep) and sends rank 1 an 8-byte integer, while rank 1 posts the matching MPI_Recv at once
! and waits about X ms for it. Rank 1 times its MPI_Recv with MPI_Wtime and at the end sends
! its waits to rank 0, which prints one line per repeat. Other ranks only join the barriers.
! Needs 2 ranks or more.
!
!   mpirun -np 2 late_sender_f90 [--ms X] [--repeats K]
!
! Output: a '#' header, then per repeat: repeat burn_cpu_ms burn_wall_ms recv_wait_ms.
program late_sender
  use mpi
  implicit none
  integer, parameter :: dp = kind(1.0d0), i8 = selected_int_kind(18)
  integer :: ierr, rank, size, i, r, repeats, n
  integer(i8) :: burned, got
  real(dp) :: ms, t0, c0, c1
  integer(i8) :: w0, w1, rate
  real(dp), allocatable :: cpu(:), wall(:), waits(:)
  character(len=64) :: arg, val

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  ms = 50
  repeats = 5
  n = command_argument_count()
  i = 1
  do while (i <= n)
    call get_command_argument(i, arg)
    if (arg == '-h' .or. arg == '--help') then
      if (rank == 0) then
        print '(a)', 'usage: mpirun -np 2 late_sender_f90 [--ms X] [--repeats K]'
        print '(a)', '  Rank 0 burns X ms of CPU, then sends to rank 1, which waits for it in MPI_Recv;'
        print '(a)', '  K times. Prints per repeat the CPU rank 0 burned and rank 1''s wait.'
        print '(a)', '  Defaults: --ms 50 --repeats 5.'
      end if
      call MPI_Finalize(ierr)
      stop
    end if
    if (i + 1 > n) call usage_error(trim(arg) // ': unknown or missing its value (try --help)')
    call get_command_argument(i + 1, val)
    if (arg == '--ms') then
      read (val, *, iostat=ierr) ms
      if (ierr /= 0 .or. .not. (ms >= 0 .and. ms <= 1e7)) &
        call usage_error("--ms '" // trim(val) // "': expected a number from 0 to 1e+07")
    else if (arg == '--repeats' .or. arg == '-r') then
      read (val, *, iostat=ierr) repeats
      if (ierr /= 0 .or. repeats < 1 .or. repeats > 1000000) &
        call usage_error("--repeats '" // trim(val) // "': expected an integer from 1 to 1000000")
    else
      call usage_error(trim(arg) // ': unknown argument (try --help)')
    end if
    i = i + 2
  end do
  if (size < 2) call usage_error('needs 2 ranks or more')

  allocate (cpu(repeats), wall(repeats), waits(repeats))
  waits = 0
  call system_clock(count_rate=rate)
  do r = 1, repeats
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      call system_clock(w0)
      call cpu_time(c0)
      c1 = c0
      do while ((c1 - c0) * 1e3_dp < ms)
        call cpu_time(c1)
      end do
      call system_clock(w1)
      cpu(r) = c1 - c0
      wall(r) = real(w1 - w0, dp) / real(rate, dp)
      burned = int((c1 - c0) * 1e9_dp, i8)
      call MPI_Send(burned, 1, MPI_INTEGER8, 1, 7, MPI_COMM_WORLD, ierr)
    else if (rank == 1) then
      t0 = MPI_Wtime()
      call MPI_Recv(got, 1, MPI_INTEGER8, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      waits(r) = MPI_Wtime() - t0
    end if
  end do
  if (rank == 1) call MPI_Send(waits, repeats, MPI_DOUBLE_PRECISION, 0, 8, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Recv(waits, repeats, MPI_DOUBLE_PRECISION, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    print '(a, f0.3, a, i0, a, i0, a)', '# late_sender.f90: rank 0 burns ', ms, &
      ' ms of CPU then sends; rank 1 receives at once; ', size, ' ranks, ', repeats, ' repeats'
    print '(a)', '# repeat burn_cpu_ms burn_wall_ms recv_wait_ms'
    do r = 1, repeats
      print '(i0, 3(1x, f0.3))', r - 1, 1e3_dp * cpu(r), 1e3_dp * wall(r), 1e3_dp * waits(r)
    end do
  end if
  call MPI_Finalize(ierr)

contains

  ! Rank 0 prints "late_sender_f90: MESSAGE" on standard error; every rank leaves MPI and exits 2.
  subroutine usage_error(message)
    use iso_fortran_env, only: error_unit
    character(len=*), intent(in) :: message
    integer :: e
    if (rank == 0) write (error_unit, '(a)') 'late_sender_f90: ' // message
    call MPI_Finalize(e)
    call exit(2)
  end subroutine usage_error
end program late_sender

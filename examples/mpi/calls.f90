! calls.f90: one call to each Fortran entry point of pp's MPI tracer (docs/mpi.md), on a ring:
! rank r sends to r+1 and receives from r-1 (mod p), a tag per step, so that a test of the
! tracer knows what each rank's log must hold. In order, on every rank (`use mpi`, MPI_INTEGER
! of 4 bytes):
!
!   MPI_Init_thread (MPI_THREAD_FUNNELED);
!   1  MPI_Irecv + MPI_Isend, then MPI_Wait on each (the receive with a status);
!   2  MPI_Irecv + MPI_Isend + MPI_Waitall ignoring the statuses;
!   3  MPI_Irecv + MPI_Isend + MPI_Waitall with them;
!   4  MPI_Sendrecv;
!   5  MPI_Ssend and MPI_Recv (even ranks send first, odd ranks receive first);
!   then MPI_Barrier, MPI_Bcast of 3 integers from rank 0, MPI_Reduce of 2 to rank 0,
!   MPI_Allreduce of 1, MPI_Alltoall of 1 to each rank, MPI_Gather of 2 to rank 0, MPI_Scatter
!   of 2 from rank 0, MPI_Allgather of 1, each result checked.
!
! So every rank receives 5 messages; rank 0 gathers the counts (one more MPI_Gather of 1) and
! prints them.
!
!   mpirun -np 4 calls_f90          (no arguments)
!
! Output: a '#' header, then per rank: rank received.
program calls
  use mpi
  use iso_fortran_env, only: error_unit
  implicit none
  integer :: ierr, provided, rank, size, right, left, i, received
  integer :: out, in, reqs(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 2)
  integer :: three(3), two(2), sums(2), one, total
  integer, allocatable :: each(:), back(:), gathered(:)
  character(len=64) :: arg

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    if (arg == '-h' .or. arg == '--help') then
      if (rank == 0) print '(a)', 'usage: mpirun -np 4 calls_f90 (no arguments)'
      call MPI_Finalize(ierr)
      stop
    end if
    if (rank == 0) write (error_unit, '(a)') 'calls_f90: ' // trim(arg) // &
      ': unknown argument (try --help)'
    call MPI_Finalize(ierr)
    call exit(2)
  end if
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)
  out = rank
  received = 0

  call MPI_Irecv(in, 1, MPI_INTEGER, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(out, 1, MPI_INTEGER, right, 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Wait(reqs(1), st, ierr)
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)
  call check(in == left .and. st(MPI_SOURCE) == left .and. st(MPI_TAG) == 1, 'wait')
  received = received + 1

  call MPI_Irecv(in, 1, MPI_INTEGER, left, 2, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(out, 1, MPI_INTEGER, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  received = received + 1

  call MPI_Irecv(in, 1, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(out, 1, MPI_INTEGER, right, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, sts, ierr)
  call check(sts(MPI_SOURCE, 1) == left .and. sts(MPI_TAG, 1) == 3, 'waitall')
  received = received + 1

  call MPI_Sendrecv(out, 1, MPI_INTEGER, right, 4, in, 1, MPI_INTEGER, left, 4, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(in == left, 'sendrecv')
  received = received + 1

  if (mod(rank, 2) == 0) then
    call MPI_Ssend(out, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, ierr)
    call MPI_Recv(in, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, st, ierr)
  else
    call MPI_Recv(in, 1, MPI_INTEGER, left, 5, MPI_COMM_WORLD, st, ierr)
    call MPI_Ssend(out, 1, MPI_INTEGER, right, 5, MPI_COMM_WORLD, ierr)
  end if
  call check(in == left, 'ssend')
  received = received + 1

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  three = rank
  call MPI_Bcast(three, 3, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(all_equal(three, 0), 'bcast')
  two = 1
  call MPI_Reduce(two, sums, 2, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(all_equal(sums, size), 'reduce')
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(total == size * (size - 1) / 2, 'allreduce')
  allocate (each(size), back(size), gathered(2 * size))
  each = rank
  call MPI_Alltoall(each, 1, MPI_INTEGER, back, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all([(back(i) == i - 1, i = 1, size)]), 'alltoall')
  two = rank
  call MPI_Gather(two, 2, MPI_INTEGER, gathered, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) call check(all([(gathered(2 * i) == i - 1, i = 1, size)]), 'gather')
  call MPI_Scatter(gathered, 2, MPI_INTEGER, two, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call check(all_equal(two, rank), 'scatter')
  one = rank
  call MPI_Allgather(one, 1, MPI_INTEGER, back, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all([(back(i) == i - 1, i = 1, size)]), 'allgather')

  call MPI_Gather(received, 1, MPI_INTEGER, each, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a, i0, a)', '# calls.f90: ', size, ' ranks'
    print '(a)', '# rank received'
    do i = 1, size
      print '(i0, 1x, i0)', i - 1, each(i)
    end do
  end if
  call MPI_Finalize(ierr)

contains

  logical function all_equal(v, x)
    integer, intent(in) :: v(:), x
    all_equal = all(v == x)
  end function all_equal

  ! Stops every rank when a result is wrong.
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (ok) return
    write (error_unit, '(a, i0, a)') 'calls_f90: rank ', rank, ': ' // what
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine check
end program calls

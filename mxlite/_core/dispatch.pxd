# C-level layout of the compiled dispatch path's classes (mxlite/_core/dispatch.pyx).


cdef class NDArrayBase:
    cdef public object _data, _ctx, _grad, _grad_req, _node, _version, _view
    cdef public long long _node_version
    cdef object __weakref__


cdef class Node:
    cdef public object op, attrs, parents, inputs, outputs
    cdef list _untaped
    cdef public object output_shapes, output_dtypes, context, variable, wants, versions
    cdef public bint released
    cdef public long long seq
    cdef object __weakref__


cdef class OpFunction:
    cdef object op, invoke, bind
    cdef Py_ssize_t n_inputs
    cdef bint direct
    cdef dict __dict__


cdef class CpuKernel:
    cdef object fn
    cdef int kind, op_id, final
    cdef bint applies(self, attrs, bint defaults)

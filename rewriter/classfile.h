/*
 * classfile - a class file (JVM specification, chapter 4) read into memory
 * and written back.  The first piece of the class rewriter: it knows the
 * format, not what the rewriter will do with it.
 *
 * A parsed class writes back byte for byte as it came in: attributes other
 * than a method's Code are kept as raw bytes in file order, and the constant
 * pool keeps its slot layout (the unusable slot after a Long or Double
 * included).  Only the Code attribute is opened up, because that is where the
 * rewriter will insert its calls; its length is recomputed when written.
 *
 * No JVM TI, no global state: everything hangs off the classfile struct.
 */
#ifndef JVMPI_CLASSFILE_H_
#define JVMPI_CLASSFILE_H_

#include <stddef.h>
#include <stdint.h>

#define CLASSFILE_MAGIC 0xCAFEBABEu
/* JDK 25's: the newest class file version whose specification this code
 * follows.  A newer class is read all the same (its version alone changes
 * nothing here); the version matters only to a Code attribute this code
 * does not know (inject.h). */
#define CLASSFILE_KNOWN_MAJOR 69

enum {
    CLASSFILE_CONSTANT_Utf8 = 1,
    CLASSFILE_CONSTANT_Integer = 3,
    CLASSFILE_CONSTANT_Float = 4,
    CLASSFILE_CONSTANT_Long = 5,
    CLASSFILE_CONSTANT_Double = 6,
    CLASSFILE_CONSTANT_Class = 7,
    CLASSFILE_CONSTANT_String = 8,
    CLASSFILE_CONSTANT_Fieldref = 9,
    CLASSFILE_CONSTANT_Methodref = 10,
    CLASSFILE_CONSTANT_InterfaceMethodref = 11,
    CLASSFILE_CONSTANT_NameAndType = 12,
    CLASSFILE_CONSTANT_MethodHandle = 15,
    CLASSFILE_CONSTANT_MethodType = 16,
    CLASSFILE_CONSTANT_Dynamic = 17,
    CLASSFILE_CONSTANT_InvokeDynamic = 18,
    CLASSFILE_CONSTANT_Module = 19,
    CLASSFILE_CONSTANT_Package = 20,
};

/*
 * One constant pool slot.  tag 0 marks a slot that holds nothing: index 0 and
 * the second slot of a Long or Double.  Which fields mean something depends
 * on the tag:
 *   Utf8                     utf8 (NUL added, not in the file), utf8_len
 *   Integer, Float           bytes_hi
 *   Long, Double             bytes_hi, bytes_lo
 *   Class, String, MethodType, Module, Package   ref1 (a Utf8)
 *   Fieldref, Methodref, InterfaceMethodref      ref1 (Class), ref2 (NameAndType)
 *   NameAndType              ref1 (name), ref2 (descriptor)
 *   MethodHandle             ref_kind, ref1 (the reference)
 *   Dynamic, InvokeDynamic   ref1 (bootstrap method attr index), ref2 (NameAndType)
 */
typedef struct {
    uint8_t tag;
    uint8_t ref_kind;
    uint16_t ref1;
    uint16_t ref2;
    uint16_t utf8_len;
    uint32_t bytes_hi;
    uint32_t bytes_lo;
    char *utf8;
} classfile_cp_entry;

typedef struct classfile_code classfile_code;

typedef struct {
    uint16_t name_index;
    uint32_t length;       /* of data; for a parsed Code, as read (rewritten on write) */
    uint8_t *data;         /* NULL when code is set */
    classfile_code *code;  /* set only for a method's Code attribute */
} classfile_attr;

typedef struct {
    uint16_t start_pc;
    uint16_t end_pc;
    uint16_t handler_pc;
    uint16_t catch_type;
} classfile_exception;

struct classfile_code {
    uint16_t max_stack;
    uint16_t max_locals;
    uint32_t code_length;
    uint8_t *code;
    uint16_t exception_count;
    classfile_exception *exceptions;
    uint16_t attr_count;
    classfile_attr *attrs;  /* LineNumberTable, StackMapTable, ...: raw */
};

typedef struct {
    uint16_t access_flags;
    uint16_t name_index;
    uint16_t descriptor_index;
    uint16_t attr_count;
    classfile_attr *attrs;
} classfile_member;

typedef struct {
    uint32_t magic;
    uint16_t minor_version;
    uint16_t major_version;

    uint16_t cp_count;          /* as in the file: valid indexes are 1..cp_count-1 */
    uint16_t cp_capacity;       /* allocated slots of cp */
    classfile_cp_entry *cp;

    uint16_t access_flags;
    uint16_t this_class;
    uint16_t super_class;       /* 0 only for java/lang/Object (and module-info) */

    uint16_t interface_count;
    uint16_t *interfaces;
    uint16_t field_count;
    classfile_member *fields;
    uint16_t method_count;
    classfile_member *methods;
    uint16_t attr_count;
    classfile_attr *attrs;
} classfile;

/*
 * Returns a new classfile, or NULL with a one-line reason in err.  data is
 * only read, never past len, and not kept.  Any major version from 45 on
 * is read.  Refused: bad magic, a major version below 45, an unknown
 * constant tag (the one thing whose length cannot be known; its reason is
 * one classfile_unknown_in finds), a reference to a missing or wrongly
 * typed constant, a count or length that overruns the input, a Code
 * attribute whose parts do not add up to its length, and bytes after the
 * end of the class.  Attributes of the class, its fields and methods are
 * kept whatever their name (see the top of this file).
 */
classfile *classfile_parse(const uint8_t *data, size_t len, char *err, size_t errlen);

/* In a reason given by this code (classfile_parse, inject_class): the thing
 * it does not know that made it leave the class alone ("constant pool tag
 * 21", "opcode 0xcb", "Code attribute Foo"), or NULL when the reason is
 * another. */
const char *classfile_unknown_in(const char *reason);

/*
 * Serializes cf into a malloc'd buffer (*out, *outlen; the caller frees it).
 * Returns 0, or -1 with a reason in err (out of memory, a count or a code
 * length too large for its field).
 */
int classfile_write(const classfile *cf, uint8_t **out, size_t *outlen, char *err, size_t errlen);

void classfile_free(classfile *cf);

/* The Utf8 at index, NUL-terminated, or NULL if index does not name a Utf8. */
const char *classfile_utf8(const classfile *cf, uint16_t index);

/* A method's Code attribute, or NULL (abstract and native methods). */
classfile_code *classfile_code_of(const classfile_member *m);

/*
 * Constant pool additions.  Each returns the index of an existing equal entry
 * if there is one, else appends an entry and returns its index; 0 if the pool
 * is full (65535 slots) or memory runs out.  Strings are taken as modified
 * UTF-8 bytes (plain ASCII names are that already) and class names in
 * internal form ("java/lang/Object").  A failed call may leave behind the
 * entries it added on the way; they are valid, merely unused.
 */
uint16_t classfile_cp_add_utf8(classfile *cf, const char *s);
uint16_t classfile_cp_add_class(classfile *cf, const char *internal_name);
uint16_t classfile_cp_add_name_and_type(classfile *cf, const char *name, const char *descriptor);
uint16_t classfile_cp_add_methodref(classfile *cf, const char *class_name, const char *name,
                                    const char *descriptor);
uint16_t classfile_cp_add_integer(classfile *cf, uint32_t value);

#endif

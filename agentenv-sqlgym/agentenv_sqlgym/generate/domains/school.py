"""School: teachers, classes, students, courses and the students' enrolments with their scores."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3

from ..families import Ask, lit, quoted
from ..spec import Attribute, Bridge, Domain, Draft, Entity, Link
from ..values import Vocabulary, day, iso, lognormal

DDL = """
CREATE TABLE teachers (
    teacher_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    subject TEXT NOT NULL,
    hire_date TEXT NOT NULL,
    salary REAL NOT NULL,
    email TEXT
);
CREATE TABLE classes (
    class_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    grade INTEGER NOT NULL,
    room TEXT NOT NULL,
    homeroom_teacher_id INTEGER NOT NULL REFERENCES teachers (teacher_id)
);
CREATE TABLE students (
    student_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    gender TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    class_id INTEGER NOT NULL REFERENCES classes (class_id),
    city TEXT NOT NULL,
    email TEXT
);
CREATE TABLE courses (
    course_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    subject TEXT NOT NULL,
    credits INTEGER NOT NULL,
    teacher_id INTEGER REFERENCES teachers (teacher_id)
);
CREATE TABLE enrollments (
    enrollment_id INTEGER PRIMARY KEY,
    student_id INTEGER NOT NULL REFERENCES students (student_id),
    course_id INTEGER NOT NULL REFERENCES courses (course_id),
    term TEXT NOT NULL,
    score REAL
);
CREATE INDEX students_class ON students (class_id);
CREATE INDEX enrollments_student ON enrollments (student_id);
CREATE INDEX enrollments_course ON enrollments (course_id);
"""

COURSES = {
    "Mathematics": ["Algebra I", "Algebra II", "Geometry", "Calculus", "Statistics"],
    "Physics": ["Mechanics", "Electricity and Magnetism", "Modern Physics"],
    "Chemistry": ["General Chemistry", "Organic Chemistry"],
    "Biology": ["Cell Biology", "Ecology", "Human Anatomy"],
    "English": ["Composition", "American Literature", "Creative Writing", "Public Speaking"],
    "History": ["World History", "Modern History", "Civics"],
    "Geography": ["Physical Geography", "Human Geography"],
    "Computer Science": ["Programming Basics", "Data Structures", "Web Design"],
    "French": ["French I", "French II"],
    "Art": ["Drawing", "Art History"],
    "Music": ["Choir", "Music Theory"],
    "Physical Education": ["Team Sports", "Fitness"],
}
TERMS = ["2022 Fall", "2023 Spring", "2023 Fall", "2024 Spring"]


def populate(db: sqlite3.Connection, rng: random.Random, words: Vocabulary) -> None:
    subjects = list(COURSES)
    teachers = []
    for tid in range(1, 61):
        name = words.person(rng)
        hired = day(rng, dt.date(1995, 1, 1), dt.date(2023, 8, 1))
        years = (dt.date(2024, 9, 1) - hired).days / 365.25
        salary = round(lognormal(rng, 48000, 0.08) + 900 * years, -1)
        subject = subjects[tid % len(subjects)] if tid <= len(subjects) else rng.choice(subjects)
        teachers.append(
            (
                tid,
                name,
                subject,
                iso(hired),
                salary,
                words.email(rng, name, "school.edu") if rng.random() < 0.8 else None,
            )
        )
    db.executemany("INSERT INTO teachers VALUES (?, ?, ?, ?, ?, ?)", teachers)

    homeroom = rng.sample([t[0] for t in teachers], 24)
    classes = []
    for i, (grade, section) in enumerate((g, s) for g in range(9, 13) for s in "ABCDEF"):
        classes.append((i + 1, f"{grade}{section}", grade, f"R{100 * (grade - 8) + i % 6 + 1}", homeroom[i]))
    db.executemany("INSERT INTO classes VALUES (?, ?, ?, ?, ?)", classes)

    cities = list(words.cities[:8])
    students, ability = [], {}
    for sid in range(1, 721):
        class_ = classes[(sid - 1) % len(classes)]
        gender = rng.choice("FM")
        name = words.person(rng, gender)
        born_year = 2024 - class_[2] - 6
        born = day(rng, dt.date(born_year - 1, 9, 1), dt.date(born_year, 8, 31))
        email = words.email(rng, name, "students.school.edu") if rng.random() < 0.6 else None
        students.append(
            (sid, name, gender, iso(born), class_[0], rng.choices(cities, [8, 5, 4, 3, 2, 2, 1, 1])[0], email)
        )
        ability[sid] = rng.gauss(0, 9)
    db.executemany("INSERT INTO students VALUES (?, ?, ?, ?, ?, ?, ?)", students)

    courses = []
    by_subject = {s: [t[0] for t in teachers if t[2] == s] for s in subjects}
    for subject, titles in COURSES.items():
        for title in titles:
            teacher = rng.choice(by_subject[subject]) if rng.random() < 0.93 else None  # a few unstaffed
            courses.append((len(courses) + 1, title, subject, rng.choice((1, 2, 3, 3, 4, 5)), teacher))
    db.executemany("INSERT INTO courses VALUES (?, ?, ?, ?, ?)", courses)

    difficulty = {c[0]: rng.gauss(0, 5) for c in courses}
    enrollments = []
    for student in students:
        for term in TERMS[2:] if student[4] <= 6 else TERMS:  # grade 9 started in 2023
            for course in rng.sample(courses, rng.randint(3, 5)):
                score = None
                if rng.random() > 0.04:
                    score = round(
                        min(100.0, max(0.0, rng.gauss(72 + ability[student[0]] - difficulty[course[0]], 10))),
                        1,
                    )
                enrollments.append((len(enrollments) + 1, student[0], course[0], term, score))
    db.executemany("INSERT INTO enrollments VALUES (?, ?, ?, ?, ?)", enrollments)


# --- questions of this domain -----------------------------------------------------------------------------


def class_average_in_subject(ask: Ask) -> Draft | None:
    class_name = ask.pick(ask.values("classes", "name"))
    subject = ask.pick(sorted(COURSES))
    joins = (
        "FROM students AS T1 INNER JOIN classes AS T2 ON T1.class_id = T2.class_id "
        "INNER JOIN enrollments AS T3 ON T1.student_id = T3.student_id INNER JOIN courses AS T4 ON T3.course_id = T4.course_id"
    )
    conditions = f"WHERE T2.name = {lit(class_name)} AND T4.subject = {lit(subject)}"
    return Draft(
        question=f"What is the average score of the students of class {quoted(class_name)} in {subject} courses? "
        "Round to two decimals.",
        sql=f"SELECT ROUND(AVG(T3.score), 2) {joins} {conditions}",
        near_miss=f"SELECT ROUND(AVG(T3.score), 2) {joins.replace('T1.class_id = T2.class_id', 'T1.student_id = T2.class_id')} {conditions}",
        wrong=(f"SELECT ROUND(AVG(T3.score), 2) {joins} WHERE T2.name = {lit(class_name)}",),
        kind="aggregate",
        difficulty="challenging",
        evidence="average score refers to AVG(score); ungraded enrolments have a NULL score",
        thought="Students give the class, enrollments the scores, courses the subject: a four-table join, then AVG.",
    )


def best_in_class(ask: Ask) -> Draft | None:
    class_name = ask.pick(ask.values("classes", "name"))
    tail = (
        "FROM students AS T1 INNER JOIN classes AS T2 ON T1.class_id = T2.class_id "
        "INNER JOIN enrollments AS T3 ON T1.student_id = T3.student_id "
        f"WHERE T2.name = {lit(class_name)} GROUP BY T1.student_id ORDER BY AVG(T3.score) DESC"
    )
    return Draft(
        question=f"Which student of class {quoted(class_name)} has the highest average score over all their "
        "enrolments? Give the name.",
        sql=f"SELECT T1.name {tail} LIMIT 1",
        near_miss=f"SELECT T1.name {tail.replace('AVG(T3.score)', 'SUM(T3.score)')} LIMIT 1",
        ranking=(f"SELECT AVG(T3.score) {tail}", 1),
        kind="order_limit",
        difficulty="challenging",
        thought="Average the scores per student of that class (GROUP BY student), highest first, keep one.",
    )


def born_before_in_grade(ask: Ask) -> Draft | None:
    grade = ask.pick([9, 10, 11, 12])
    dates = ask.values(
        "students AS T1 INNER JOIN classes AS T2 ON T1.class_id = T2.class_id",
        "T1.birth_date",
        f"T2.grade = {grade}",
    )
    if len(dates) < 10:
        return None
    cut = dates[ask.rng.randint(2, len(dates) - 3)]
    joins = "students AS T1 INNER JOIN classes AS T2 ON T1.class_id = T2.class_id"
    return Draft(
        question=f"How many students in grade {grade} were born before {cut}?",
        sql=f"SELECT COUNT(*) FROM {joins} WHERE T2.grade = {grade} AND T1.birth_date < {lit(cut)}",
        near_miss=f"SELECT COUNT(*) FROM {joins} WHERE T2.grade = {grade} AND T1.birth_date <= {lit(cut)}",
        wrong=(f"SELECT COUNT(*) FROM {joins} WHERE T2.grade = {grade}",),
        kind="join",
        difficulty="moderate",
        evidence=f"born before {cut} refers to birth_date < {lit(cut)}",
        thought="The grade is a column of classes; ISO dates compare as text, so birth_date < the date works.",
    )


def homeroom_without_course(ask: Ask) -> Draft | None:
    subject = ask.pick(sorted(COURSES))
    left = "SELECT T1.name FROM teachers AS T1 INNER JOIN classes AS T2 ON T1.teacher_id = T2.homeroom_teacher_id"
    right = "SELECT T1.name FROM teachers AS T1 INNER JOIN courses AS T2 ON T1.teacher_id = T2.teacher_id"
    of_subject = f" WHERE T1.subject = {lit(subject)}" if ask.rng.random() < 0.3 else ""
    also = f" {subject}" if of_subject else ""
    return Draft(
        question=f"List the names of the{also} teachers who are the homeroom teacher of a class but teach no course.",
        sql=f"{left}{of_subject} EXCEPT {right}",
        near_miss=f"{left}{of_subject} INTERSECT {right}",
        wrong=(f"{left}{of_subject}",),
        kind="set_operation",
        difficulty="challenging",
        thought="Homeroom teachers (joined through classes) EXCEPT teachers of a course (joined through courses).",
    )


DOMAIN = Domain(
    name="school",
    ddl=DDL,
    populate=populate,
    entities=(
        Entity(
            "teachers",
            "teacher_id",
            "teacher",
            "teachers",
            label="name",
            numbers=(Attribute("salary", "salary"),),
            categories=(Attribute("subject", "subject"),),
            dates=(Attribute("hire_date", "hire date"),),
            optional=(Attribute("email", "email address"),),
        ),
        Entity(
            "classes",
            "class_id",
            "class",
            "classes",
            label="name",
            numbers=(Attribute("grade", "grade"),),
        ),
        Entity(
            "students",
            "student_id",
            "student",
            "students",
            label="name",
            categories=(Attribute("gender", "gender"), Attribute("city", "city")),
            dates=(Attribute("birth_date", "birth date"),),
            optional=(Attribute("email", "email address"),),
        ),
        Entity(
            "courses",
            "course_id",
            "course",
            "courses",
            label="title",
            label_phrase="title",
            named="titled",
            numbers=(Attribute("credits", "number of credits"),),
            categories=(Attribute("subject", "subject"),),
        ),
        Entity(
            "enrollments",
            "enrollment_id",
            "enrolment",
            "enrolments",
            numbers=(Attribute("score", "score"),),
            categories=(Attribute("term", "term"),),
            optional=(Attribute("score", "score"),),
        ),
    ),
    links=(
        Link("classes", "homeroom_teacher_id", "teachers", "homeroom teacher"),
        Link("students", "class_id", "classes", "class"),
        Link("courses", "teacher_id", "teachers", "teacher"),
        Link("enrollments", "student_id", "students", "student"),
        Link("enrollments", "course_id", "courses", "course"),
    ),
    bridges=(
        Bridge(
            "enrollments",
            Link("enrollments", "student_id", "students"),
            Link("enrollments", "course_id", "courses"),
            rights_of_left="List the titles of the courses the student {v} has been enrolled in.",
            lefts_of_right="List the names of the students enrolled in the course {v}.",
        ),
    ),
    templates=(class_average_in_subject, best_in_class, born_before_in_grade, homeroom_without_course),
)

"""Hospital: departments, doctors, patients, admissions and the prescriptions written during them."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3

from ..families import Ask, lit, quoted
from ..spec import Attribute, Bridge, Domain, Draft, Entity, Link
from ..values import Vocabulary, day, iso, lognormal, picker, weighted

DDL = """
CREATE TABLE departments (
    department_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    building TEXT NOT NULL,
    floor INTEGER NOT NULL
);
CREATE TABLE doctors (
    doctor_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    position TEXT NOT NULL,
    department_id INTEGER NOT NULL REFERENCES departments (department_id),
    hired_on TEXT NOT NULL,
    salary REAL NOT NULL
);
CREATE TABLE patients (
    patient_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    gender TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    blood_type TEXT,
    city TEXT NOT NULL,
    insurance TEXT
);
CREATE TABLE admissions (
    admission_id INTEGER PRIMARY KEY,
    patient_id INTEGER NOT NULL REFERENCES patients (patient_id),
    doctor_id INTEGER NOT NULL REFERENCES doctors (doctor_id),
    admitted_on TEXT NOT NULL,
    discharged_on TEXT,
    diagnosis TEXT NOT NULL,
    cost REAL NOT NULL
);
CREATE TABLE prescriptions (
    prescription_id INTEGER PRIMARY KEY,
    admission_id INTEGER NOT NULL REFERENCES admissions (admission_id),
    drug TEXT NOT NULL,
    dose_mg REAL NOT NULL,
    days INTEGER NOT NULL
);
CREATE INDEX doctors_department ON doctors (department_id);
CREATE INDEX admissions_patient ON admissions (patient_id);
CREATE INDEX admissions_doctor ON admissions (doctor_id);
CREATE INDEX prescriptions_admission ON prescriptions (admission_id);
"""

#: department -> diagnoses treated there
DEPARTMENTS = {
    "Cardiology": ["atrial fibrillation", "heart failure", "angina", "hypertension"],
    "Neurology": ["migraine", "stroke", "epilepsy"],
    "Oncology": ["lymphoma", "breast cancer", "lung cancer"],
    "Pediatrics": ["bronchiolitis", "otitis media", "gastroenteritis"],
    "Orthopedics": ["hip fracture", "knee injury", "back pain"],
    "Pulmonology": ["pneumonia", "asthma", "COPD"],
    "Gastroenterology": ["appendicitis", "gallstones", "ulcer"],
    "Nephrology": ["kidney stones", "kidney failure"],
    "Dermatology": ["cellulitis", "psoriasis"],
    "Psychiatry": ["depression", "anxiety disorder"],
}
POSITIONS = {"attending": 40, "resident": 30, "consultant": 20, "fellow": 10}
BLOOD_TYPES = {"O+": 37, "A+": 34, "B+": 9, "AB+": 4, "O-": 7, "A-": 6, "B-": 2, "AB-": 1}
#: drug -> usual dose in mg
DRUGS = {
    "amoxicillin": 500,
    "ibuprofen": 400,
    "paracetamol": 1000,
    "metformin": 850,
    "atorvastatin": 20,
    "lisinopril": 10,
    "omeprazole": 20,
    "warfarin": 5,
    "prednisone": 40,
    "morphine": 10,
    "sertraline": 50,
}


def populate(db: sqlite3.Connection, rng: random.Random, words: Vocabulary) -> None:
    departments = [
        (i, name, rng.choice("ABC"), rng.randint(1, 6)) for i, name in enumerate(DEPARTMENTS, start=1)
    ]
    db.executemany("INSERT INTO departments VALUES (?, ?, ?, ?)", departments)

    base_salary = {"attending": 210000, "resident": 65000, "consultant": 260000, "fellow": 80000}
    doctors = []
    for did in range(1, 91):
        position = weighted(rng, POSITIONS)
        hired = day(rng, dt.date(1998, 1, 1), dt.date(2023, 12, 31))
        department = (
            departments[(did - 1) % len(departments)] if did <= len(departments) else rng.choice(departments)
        )
        doctors.append(
            (
                did,
                f"Dr. {words.person(rng)}",
                position,
                department[0],
                iso(hired),
                lognormal(rng, base_salary[position], 0.12, 0),
            )
        )
    db.executemany("INSERT INTO doctors VALUES (?, ?, ?, ?, ?, ?)", doctors)

    cities = list(words.cities[:12])
    patients = []
    for pid in range(1, 1501):
        gender = rng.choice("FM")
        born = day(rng, dt.date(1930, 1, 1), dt.date(2022, 12, 31))
        patients.append(
            (
                pid,
                words.person(rng, gender),
                gender,
                iso(born),
                weighted(rng, BLOOD_TYPES) if rng.random() < 0.85 else None,
                rng.choices(cities, [12 - i for i in range(len(cities))])[0],
                rng.choice(("public", "public", "private")) if rng.random() < 0.9 else None,
            )
        )
    db.executemany("INSERT INTO patients VALUES (?, ?, ?, ?, ?, ?, ?)", patients)

    frequent = picker(
        rng, patients, [0.0 if rng.random() < 0.12 else rng.paretovariate(2.0) for _ in patients]
    )
    busy = picker(rng, doctors, [rng.uniform(0.3, 2.0) for _ in doctors])
    admissions, prescriptions = [], []
    for aid in range(1, 3601):
        patient, doctor = frequent()[0], busy()[0]
        department = departments[doctor[3] - 1][1]
        admitted = day(
            rng, max(dt.date(2020, 1, 1), dt.date.fromisoformat(patient[3])), dt.date(2024, 12, 31)
        )
        stay = 1 + int(rng.expovariate(1 / 4))
        discharged = admitted + dt.timedelta(days=stay)
        still_in = discharged > dt.date(2024, 12, 31) or rng.random() < 0.02
        cost = round(lognormal(rng, 1800, 0.4) * stay, 2)
        admissions.append(
            (
                aid,
                patient[0],
                doctor[0],
                iso(admitted),
                None if still_in else iso(discharged),
                rng.choice(DEPARTMENTS[department]),
                cost,
            )
        )
        for drug in rng.sample(list(DRUGS), rng.choice((0, 1, 1, 2, 2, 3))):
            dose = DRUGS[drug] * rng.choice((0.5, 1, 1, 1, 2))
            prescriptions.append((len(prescriptions) + 1, aid, drug, dose, rng.choice((3, 5, 7, 10, 14, 30))))
    db.executemany("INSERT INTO admissions VALUES (?, ?, ?, ?, ?, ?, ?)", admissions)
    db.executemany("INSERT INTO prescriptions VALUES (?, ?, ?, ?, ?)", prescriptions)


# --- questions of this domain -----------------------------------------------------------------------------

_STAFF = "admissions AS T1 INNER JOIN doctors AS T2 ON T1.doctor_id = T2.doctor_id INNER JOIN departments AS T3 ON T2.department_id = T3.department_id"


def average_stay(ask: Ask) -> Draft | None:
    department = ask.pick(sorted(DEPARTMENTS))
    stay = "julianday(T1.discharged_on) - julianday(T1.admitted_on)"
    return Draft(
        question=f"What is the average length of stay, in days, of the discharged admissions handled by doctors "
        f"of the {department} department? Round to two decimals.",
        sql=f"SELECT ROUND(AVG({stay}), 2) FROM {_STAFF} WHERE T3.name = {lit(department)} AND T1.discharged_on IS NOT NULL",
        near_miss=f"SELECT ROUND(AVG({stay}), 2) FROM {_STAFF.replace('T2.department_id = T3', 'T2.doctor_id = T3')} "
        f"WHERE T3.name = {lit(department)} AND T1.discharged_on IS NOT NULL",
        wrong=(f"SELECT ROUND(AVG({stay}), 2) FROM {_STAFF}",),
        kind="aggregate",
        difficulty="challenging",
        evidence="length of stay refers to julianday(discharged_on) - julianday(admitted_on)",
        thought="Admissions give the dates, doctors the department: join the three tables, average the stays.",
    )


def drugs_of_patient(ask: Ask) -> Draft | None:
    name = ask.pick(ask.unique_labels(ask.domain.entity("patients")))
    joins = (
        "FROM patients AS T1 INNER JOIN admissions AS T2 ON T1.patient_id = T2.patient_id "
        "INNER JOIN prescriptions AS T3 ON T2.admission_id = T3.admission_id"
    )
    return Draft(
        question=f"Which drugs were prescribed to the patient {quoted(name)}? List each drug once.",
        sql=f"SELECT DISTINCT T3.drug {joins} WHERE T1.name = {lit(name)}",
        near_miss=f"SELECT DISTINCT T3.drug {joins.replace('T2.admission_id = T3.admission_id', 'T2.patient_id = T3.admission_id')} "
        f"WHERE T1.name = {lit(name)}",
        kind="join",
        difficulty="moderate",
        thought="Patients lead to admissions, admissions to prescriptions: two joins, DISTINCT drugs.",
    )


def elderly_admissions(ask: Ask) -> Draft | None:
    year = ask.pick(["2020", "2021", "2022", "2023", "2024"])
    age = ask.pick([65, 70, 75, 80])
    joins = "admissions AS T1 INNER JOIN patients AS T2 ON T1.patient_id = T2.patient_id"
    aged = f"(julianday(T1.admitted_on) - julianday(T2.birth_date)) / 365.25 >= {age}"
    in_year = f"strftime('%Y', T1.admitted_on) = {lit(year)}"
    return Draft(
        question=f"How many admissions in {year} were of patients aged {age} or more on the day they were admitted?",
        sql=f"SELECT COUNT(*) FROM {joins} WHERE {in_year} AND {aged}",
        near_miss=f"SELECT COUNT(*) FROM {joins} WHERE {in_year} AND (julianday('2025-01-01') - julianday(T2.birth_date)) / 365.25 >= {age}",
        wrong=(f"SELECT COUNT(*) FROM {joins} WHERE {in_year}",),
        kind="join",
        difficulty="challenging",
        evidence=f"aged {age} or more on admission refers to (julianday(admitted_on) - julianday(birth_date)) / 365.25 >= {age}",
        thought="The age at admission compares the two dates: the day difference divided by 365.25.",
    )


def still_in_hospital(ask: Ask) -> Draft | None:
    department = ask.pick(sorted(DEPARTMENTS))
    joins = (
        "FROM patients AS T0 INNER JOIN admissions AS T1 ON T0.patient_id = T1.patient_id "
        "INNER JOIN doctors AS T2 ON T1.doctor_id = T2.doctor_id INNER JOIN departments AS T3 ON T2.department_id = T3.department_id"
    )
    return Draft(
        question=f"List the names of the patients still in hospital (admitted, not yet discharged) under a doctor of "
        f"the {department} department.",
        sql=f"SELECT DISTINCT T0.name {joins} WHERE T3.name = {lit(department)} AND T1.discharged_on IS NULL",
        near_miss=f"SELECT DISTINCT T0.name {joins} WHERE T3.name = {lit(department)} AND T1.discharged_on IS NOT NULL",
        wrong=(f"SELECT DISTINCT T0.name {joins} WHERE T1.discharged_on IS NULL",),
        kind="join",
        difficulty="challenging",
        evidence="still in hospital refers to discharged_on IS NULL",
        thought="Four tables: patients, admissions, doctors, departments; not discharged means discharged_on IS NULL.",
    )


DOMAIN = Domain(
    name="hospital",
    ddl=DDL,
    populate=populate,
    entities=(
        Entity(
            "departments",
            "department_id",
            "department",
            "departments",
            label="name",
            numbers=(Attribute("floor", "floor"),),
            categories=(Attribute("building", "building"),),
        ),
        Entity(
            "doctors",
            "doctor_id",
            "doctor",
            "doctors",
            label="name",
            numbers=(Attribute("salary", "salary"),),
            categories=(Attribute("position", "position"),),
            dates=(Attribute("hired_on", "hiring date"),),
        ),
        Entity(
            "patients",
            "patient_id",
            "patient",
            "patients",
            label="name",
            categories=(
                Attribute("gender", "gender"),
                Attribute("blood_type", "blood type"),
                Attribute("city", "city"),
            ),
            dates=(Attribute("birth_date", "birth date"),),
            optional=(Attribute("blood_type", "blood type"), Attribute("insurance", "insurance")),
        ),
        Entity(
            "admissions",
            "admission_id",
            "admission",
            "admissions",
            numbers=(Attribute("cost", "cost"),),
            categories=(Attribute("diagnosis", "diagnosis"),),
            dates=(Attribute("admitted_on", "admission date"),),
            optional=(Attribute("discharged_on", "discharge date"),),
        ),
        Entity(
            "prescriptions",
            "prescription_id",
            "prescription",
            "prescriptions",
            numbers=(Attribute("dose_mg", "dose in milligrams"), Attribute("days", "number of days")),
            categories=(Attribute("drug", "drug"),),
        ),
    ),
    links=(
        Link("doctors", "department_id", "departments", "department"),
        Link("admissions", "patient_id", "patients", "patient"),
        Link("admissions", "doctor_id", "doctors", "doctor"),
        Link("prescriptions", "admission_id", "admissions"),
    ),
    bridges=(
        Bridge(
            "admissions",
            Link("admissions", "patient_id", "patients"),
            Link("admissions", "doctor_id", "doctors"),
            rights_of_left="List the names of the doctors who treated the patient {v}.",
            lefts_of_right="List the names of the patients treated by {v}.",
        ),
    ),
    templates=(average_stay, drugs_of_patient, elderly_admissions, still_in_hospital),
)

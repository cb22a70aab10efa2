FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir .
ENV NAMESAKE_DATA_DIR=/data
EXPOSE 8000
CMD ["namesake", "serve", "--host", "0.0.0.0", "--port", "8000"]
